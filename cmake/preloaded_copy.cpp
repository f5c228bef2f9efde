// Runs at build time: writes a copy of a preloaded tuning JSON document that the library embeds
// beside the full file.
//   --without-candidates: every candidate table emptied (cache/candidate_tables.hpp), what a
//                         gemm() reads;
//   --timed-candidates:   each table cut to its timed candidates and winner
//                         (cache/timed_candidates.hpp), what the tuning history reads.
// Usage: tilemm_preloaded_copy --without-candidates|--timed-candidates <input.json> <output.json>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "candidate_tables.hpp"
#include "timed_candidates.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[1] : "";
  if (mode != "--without-candidates" && mode != "--timed-candidates") {
    std::cerr << "usage: tilemm_preloaded_copy --without-candidates|--timed-candidates "
                 "<input.json> <output.json>\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "tilemm_preloaded_copy: cannot read " << argv[2] << "\n";
    return 1;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string copy;
  try {
    copy = mode == "--without-candidates" ? tilemm::cache::without_candidate_tables(text)
                                          : tilemm::cache::with_timed_candidates_only(text);
  } catch (const std::exception& e) {
    std::cerr << "tilemm_preloaded_copy: " << argv[2] << ": " << e.what() << "\n";
    return 1;
  }
  std::ofstream out(argv[3], std::ios::binary | std::ios::trunc);
  out << copy;
  out.close();
  if (!out) {
    std::cerr << "tilemm_preloaded_copy: cannot write " << argv[3] << "\n";
    return 1;
  }
  return 0;
}
