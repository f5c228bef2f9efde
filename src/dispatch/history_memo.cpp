#include "history_memo.hpp"

#include <algorithm>
#include <utility>

#include "tuning_history.hpp"

namespace tilemm::dispatch {
namespace {

bool same_version(const cache::StoredEntry& a, const cache::StoredEntry& b) {
  return a.tuned_at == b.tuned_at && a.winner == b.winner && a.median_ms == b.median_ms &&
         a.source == b.source && a.tilemm_version == b.tilemm_version &&
         a.versions.template_hash == b.versions.template_hash &&
         a.versions.nvrtc_version == b.versions.nvrtc_version &&
         a.versions.driver_version == b.versions.driver_version && a.arch == b.arch;
}

}  // namespace

std::optional<cache::StoredEntry> HistoryMemo::entry(const cache::StoredEntry& header,
                                                     const Read& read) {
  const Key key{header.device_key, header.M,         header.N,           header.K,
                header.problem_class, header.precision, header.candidate_set};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto it = kept_.find(key); it != kept_.end() && same_version(it->second, header))
      return it->second;
  }
  std::optional<cache::StoredEntry> read_entry = read(header);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!read_entry) {
    kept_.erase(key);
    return std::nullopt;
  }
  auto& candidates = read_entry->candidates;
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                  [](const CandidateResult& c) { return !counts_in_history(c); }),
                   candidates.end());
  for (auto& c : candidates) c.reason.clear();  // never read by a history
  if (kept_.size() >= kMostKept && !kept_.count(key)) kept_.clear();
  // Kept under the key and version of what was read, which a rewrite since the listing may have
  // changed: the next listing then finds it current.
  kept_[key] = *read_entry;
  return read_entry;
}

}  // namespace tilemm::dispatch
