#include <unistd.h>

#include <iostream>

#include "check_cli.hpp"

int main(int argc, char** argv) {
  return tilemm::check::run_check_cli(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}
