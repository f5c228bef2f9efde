// Runs at build time: writes a tuning JSON document without its candidate tables
// (cache/candidate_tables.hpp), so that the library embeds the preloaded results' headers beside
// the full files and a gemm() reads a few kilobytes instead of every candidate's timing.
// Usage: tilemm_strip_candidate_tables <input.json> <output.json>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "candidate_tables.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: tilemm_strip_candidate_tables <input.json> <output.json>\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "tilemm_strip_candidate_tables: cannot read " << argv[1] << "\n";
    return 1;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << tilemm::cache::without_candidate_tables(text);
  out.close();
  if (!out) {
    std::cerr << "tilemm_strip_candidate_tables: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
