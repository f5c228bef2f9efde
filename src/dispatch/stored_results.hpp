// The results a shape may be served from without tuning: fresh entries of the SQLite cache and
// of the preloaded files whose winner can run here, and their conversion to what autotune()
// returns and what the cache stores. Freshness and usability are the provenance policy's
// (provenance.hpp); this part only asks it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "guarded_store.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/device.hpp"
#include "tuner.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

using EntryList = std::function<const std::vector<cache::StoredEntry>&()>;
using EntryOfHeader =
    std::function<std::optional<cache::StoredEntry>(const cache::StoredEntry& header)>;

class StoredResults {
 public:
  // `preloaded_with_candidates`: a shipped entry with its candidates, by its header;
  // `preloaded_headers`: the shipped entries without candidates; `preloaded_timed`: the same with
  // their timed candidates only (Collaborators).
  StoredResults(GuardedStore& store, EntryOfHeader preloaded_with_candidates,
                EntryList preloaded_headers, EntryList preloaded_timed);

  // The cache's entry of `problem` if it is fresh and of a candidate set that serves it (asked
  // for in the order of sets_serving, provenance.hpp); a store failure warns and counts as a
  // miss.
  std::optional<cache::StoredEntry> fresh_entry(const DeviceInfo& device, const Problem& problem,
                                                bool with_candidates);
  // A fresh entry whose winner can serve `problem` here: what another process's tuning stored.
  std::optional<cache::StoredEntry> usable_entry(const DeviceInfo& device, const Problem& problem);
  // The preloaded entry of this device model, else architecture, that applies here and whose
  // candidate set serves `problem`.
  std::optional<cache::StoredEntry> preloaded_entry(const DeviceInfo& device,
                                                    const Problem& problem, bool with_candidates);
  // The winner of a fresh, usable result of `problem` (cache, then preloaded), nothing loaded.
  std::optional<std::string> stored_winner(const DeviceInfo& device, const Problem& problem);
  // Every entry of this device model in the cache, with their candidates when asked; a store
  // failure warns and lists none.
  std::vector<cache::StoredEntry> listed(const DeviceInfo& device, bool with_candidates);
  // The cache's entry of `header`'s key (an entry listed without candidates), with its candidates:
  // one entry's read under the store's lock. None when it is gone; a store failure warns.
  std::optional<cache::StoredEntry> with_candidates(const cache::StoredEntry& header);

  const std::vector<cache::StoredEntry>& preloaded_headers() { return preloaded_headers_(); }
  const std::vector<cache::StoredEntry>& preloaded_timed() { return preloaded_timed_(); }

 private:
  GuardedStore& store_;
  EntryOfHeader preloaded_with_candidates_;
  EntryList preloaded_headers_;
  EntryList preloaded_timed_;
};

// The source a stored entry reports ("imported", "preloaded", else the cache).
ResultSource source_of(const std::string& stored);

// A stored entry as autotune() returns it, its candidates ranked like a fresh tuning's.
AutotuneResult to_result(const cache::StoredEntry& e, const Problem& problem, ResultSource source);

// The stored record of a tuning of `problem` on `device`, under the candidate set it chose from
// (candidate_set_of).
cache::StoredEntry entry_of(const DeviceInfo& device, const Problem& problem,
                            const tuner::TuneOutcome& outcome, const std::string& tuned_at);

}  // namespace tilemm::dispatch
