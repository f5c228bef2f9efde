// Runs at build time: writes a copy of a preloaded tuning JSON document that the library embeds
// beside the full file.
//   --without-candidates: every candidate table emptied (cache/candidate_tables.hpp), what a
//                         gemm() reads;
//   --timed-candidates:   each table cut to its timed candidates and winner
//                         (cache/timed_candidates.hpp), what the tuning history reads;
//   --entry-spans:        not a copy but where each entry stands in the file, "<offset>
//                         <length>" a line (cache/candidate_tables.hpp), so that an autotune()
//                         parses the one entry it returns.
// Usage: tilemm_preloaded_copy --without-candidates|--timed-candidates|--entry-spans <input.json>
//        <output>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "candidate_tables.hpp"
#include "timed_candidates.hpp"

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[1] : "";
  if (mode != "--without-candidates" && mode != "--timed-candidates" && mode != "--entry-spans") {
    std::cerr << "usage: tilemm_preloaded_copy --without-candidates|--timed-candidates|"
                 "--entry-spans <input.json> <output>\n";
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
    if (mode == "--without-candidates") {
      copy = tilemm::cache::without_candidate_tables(text);
    } else if (mode == "--timed-candidates") {
      copy = tilemm::cache::with_timed_candidates_only(text);
    } else {
      for (const auto& span : tilemm::cache::entry_spans(text))
        copy += std::to_string(span.offset) + " " + std::to_string(span.length) + "\n";
    }
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
