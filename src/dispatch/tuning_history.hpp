// What a budgeted tuning ranks its candidates by (tuner/candidate_ranking.hpp): the shapes this
// device model has measured, from the SQLite cache and the preloaded results, of the problem's
// class and fresh by the one provenance policy (provenance.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "candidate_ranking.hpp"
#include "tilemm/device.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

// Whether a stored candidate's median counts in a history: it was timed at all (ok, or pruned
// after timing: a budgeted search's dropped candidates, a probe over the give-up time), and it is
// a kernel's, not a row-split plan's.
bool counts_in_history(const CandidateResult& candidate);

// A budgeted tuning's history holds at most this many of the cache's entries, the nearest to the
// problem. Reading an entry's candidates is most of a history's cost, and without a bound it grows
// with the cache; the ranking predicts each candidate from the nearest few shapes that timed it.
inline constexpr std::size_t kHistoryEntries = 64;

// Of `headers` (the cache's entries of the device's model, without candidates), those a history of
// `problem` reads: of its class and precision, fresh (is_fresh against running_versions), and of
// those the kHistoryEntries nearest (tuner::log_distance; ties by shape), nearest first.
std::vector<cache::StoredEntry> history_headers(std::vector<cache::StoredEntry> headers,
                                                const DeviceInfo& device, const Problem& problem);

// One MeasuredShape per (M, N, K) among `cached` (entries of the device's model) and `preloaded`
// (those that apply to the device: cache::preloaded_applies) whose class is `problem_class`, whose
// precision is `precision` (another precision's tuning timed other kernels) and that are fresh
// (is_fresh against running_versions of each entry's own problem on `device`); a shape in both
// comes from the cache (measured on this machine).
// A shape's medians are those of its candidates that counts_in_history accepts. Cost: linear in
// the entries' candidates, plus the results hash of each entry of the class (memoized per shape).
std::vector<tuner::MeasuredShape> measured_shapes(const std::vector<cache::StoredEntry>& cached,
                                                  const std::vector<cache::StoredEntry>& preloaded,
                                                  const DeviceInfo& device,
                                                  const std::string& problem_class,
                                                  Precision precision = Precision::highest);

}  // namespace tilemm::dispatch
