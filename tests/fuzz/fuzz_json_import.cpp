// libFuzzer target over the JSON import (cache/tuning_json.cpp): any input either parses into
// entries that survive an export/import round trip, or is rejected with tilemm::InvalidArgument;
// read as a stream, as tilemm-tune --import reads a file, it gives the same outcome. Anything
// else (another exception, a crash, a sanitizer report) is a bug.
//
// Fuzzing: cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DTILEMM_FUZZ=ON
//          cmake --build build-fuzz --target fuzz_json_import
//          build-fuzz/tests/fuzz_json_import -max_total_time=600 tests/fuzz/corpus
// The corpus is replayed by the regular test fuzz_json_replay in every build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "row_split.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

namespace {

// The streaming reader over a stream (what tilemm-tune --import uses) must agree with the reader
// over text: the same entries, or the same field named.
void check_stream_agrees(const std::string& text, const std::string* rejected_field,
                         std::size_t accepted) {
  std::istringstream in(text);
  std::size_t handed_on = 0;
  try {
    const std::size_t count =
        tilemm::cache::read_entries_json(in, tilemm::detail::why_not_a_known_name, [&](tilemm::cache::StoredEntry&&) { ++handed_on; });
    if (rejected_field != nullptr || count != accepted || handed_on != accepted) std::abort();
  } catch (const tilemm::InvalidArgument& e) {
    if (rejected_field == nullptr || e.argument() != *rejected_field) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<tilemm::cache::StoredEntry> entries;
  try {
    entries = tilemm::cache::entries_from_json(text, tilemm::detail::why_not_a_known_name);
  } catch (const tilemm::InvalidArgument& e) {
    check_stream_agrees(text, &e.argument(), 0);
    return 0;  // rejected with the field named: the expected outcome for bad input
  }
  check_stream_agrees(text, nullptr, entries.size());
  // Accepted input must export to something that imports again to the same entries.
  const auto again = tilemm::cache::entries_from_json(tilemm::cache::entries_to_json(entries), tilemm::detail::why_not_a_known_name);
  if (again.size() != entries.size()) std::abort();
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (again[i].winner != entries[i].winner || again[i].M != entries[i].M ||
        again[i].candidates.size() != entries[i].candidates.size())
      std::abort();
  return 0;
}
