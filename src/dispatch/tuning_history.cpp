#include "tuning_history.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "preloaded.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "shape_key.hpp"

namespace tilemm::dispatch {

bool counts_in_history(const CandidateResult& c) {
  const bool timed = c.status == CandidateStatus::ok ||
                     (c.status == CandidateStatus::pruned && c.stats.samples > 0);
  return timed && c.stats.median_ms > 0 && !detail::parse_row_split(c.variant);
}

namespace {

tuner::MeasuredShape shape_of(const cache::StoredEntry& e) {
  tuner::MeasuredShape m{e.M, e.N, e.K, {}};
  for (const auto& c : e.candidates)
    if (counts_in_history(c)) m.median_ms[c.variant] = c.stats.median_ms;
  return m;
}

}  // namespace

std::vector<cache::StoredEntry> history_headers(std::vector<cache::StoredEntry> headers,
                                                const DeviceInfo& device, const Problem& problem) {
  const std::string problem_class = class_of(problem);
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [&](const cache::StoredEntry& e) {
                                 return e.problem_class != problem_class ||
                                        e.precision != problem.precision ||
                                        !is_fresh(e, running_versions(device, e));
                               }),
                headers.end());
  const auto nearer = [&](const cache::StoredEntry& a, const cache::StoredEntry& b) {
    const double da = tuner::log_distance(a.M, a.N, a.K, problem);
    const double db = tuner::log_distance(b.M, b.N, b.K, problem);
    if (da != db) return da < db;
    return std::tie(a.M, a.N, a.K, a.candidate_set) < std::tie(b.M, b.N, b.K, b.candidate_set);
  };
  const std::size_t kept = std::min(headers.size(), kHistoryEntries);
  std::partial_sort(headers.begin(), headers.begin() + static_cast<std::ptrdiff_t>(kept),
                    headers.end(), nearer);
  headers.resize(kept);
  return headers;
}

std::vector<tuner::MeasuredShape> measured_shapes(const std::vector<cache::StoredEntry>& cached,
                                                  const std::vector<cache::StoredEntry>& preloaded,
                                                  const DeviceInfo& device,
                                                  const std::string& problem_class,
                                                  Precision precision) {
  std::vector<tuner::MeasuredShape> out;
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  const auto wanted = [&](const cache::StoredEntry& e) {
    return e.problem_class == problem_class && e.precision == precision &&
           !seen.count({e.M, e.N, e.K});
  };
  const auto add = [&](const cache::StoredEntry& e) {
    seen.insert({e.M, e.N, e.K});
    tuner::MeasuredShape m = shape_of(e);
    if (!m.median_ms.empty()) out.push_back(std::move(m));
  };
  for (const auto& e : cached)
    if (e.device_key == device.model_key() && wanted(e) &&
        is_fresh(e, running_versions(device, e)))
      add(e);
  for (const auto& e : preloaded)
    if (wanted(e) &&
        cache::preloaded_applies(e, device.model_key(), device.arch(), running_versions(device, e)))
      add(e);
  return out;
}

}  // namespace tilemm::dispatch
