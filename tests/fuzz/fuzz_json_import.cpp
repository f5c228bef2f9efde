// libFuzzer target over the JSON import (cache/tuning_json.cpp): any input either parses into
// entries that survive an export/import round trip, or is rejected with tilemm::InvalidArgument.
// Anything else (another exception, a crash, a sanitizer report) is a bug.
//
// Fuzzing: cmake -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DTILEMM_FUZZ=ON
//          cmake --build build-fuzz --target fuzz_json_import
//          build-fuzz/tests/fuzz_json_import -max_total_time=600 tests/fuzz/corpus
// The corpus is replayed by the regular test fuzz_json_replay in every build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tilemm/error.hpp"
#include "tuning_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<tilemm::cache::StoredEntry> entries;
  try {
    entries = tilemm::cache::entries_from_json(text);
  } catch (const tilemm::InvalidArgument&) {
    return 0;  // rejected with the field named: the expected outcome for bad input
  }
  // Accepted input must export to something that imports again to the same entries.
  const auto again = tilemm::cache::entries_from_json(tilemm::cache::entries_to_json(entries));
  if (again.size() != entries.size()) std::abort();
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (again[i].winner != entries[i].winner || again[i].M != entries[i].M ||
        again[i].candidates.size() != entries[i].candidates.size())
      std::abort();
  return 0;
}
