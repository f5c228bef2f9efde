#include <unistd.h>

#include <iostream>

#include "tune_cli.hpp"

int main(int argc, char** argv) {
  return tilemm::cli::run_tune_cli(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}
