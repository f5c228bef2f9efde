// The cache's entries that budgeted tunings rank by (tuning_history.hpp), kept in memory with
// their timed candidates only. An entry holds hundreds of candidates, and reading them is most of
// a history's cost: without the memo a process that tunes many shapes of one class reads every
// entry of the class again for each shape, a cost that grows with the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "tuning_store.hpp"

namespace tilemm::dispatch {

class HistoryMemo {
 public:
  // Beyond this many entries the memo starts again empty: it bounds the memory of a process whose
  // cache keeps growing, at the cost of reading each entry once more.
  static constexpr std::size_t kMostKept = 4096;

  using Read = std::function<std::optional<cache::StoredEntry>(const cache::StoredEntry& header)>;

  // The entry of `header` (an entry listed without candidates) with its timed candidates
  // (counts_in_history): the one kept where it has the header's version, else read with `read`
  // and kept. The version is what a rewrite of the entry changes: when and under which versions it
  // was tuned, its source, winner and median. nullopt where `read` finds none (the entry was
  // removed). Thread-safe; `read` runs without the memo's lock.
  std::optional<cache::StoredEntry> entry(const cache::StoredEntry& header, const Read& read);

 private:
  using Key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::string,
                         Precision, cache::CandidateSet>;
  std::mutex mutex_;
  std::map<Key, cache::StoredEntry> kept_;
};

}  // namespace tilemm::dispatch
