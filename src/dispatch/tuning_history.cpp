#include "tuning_history.hpp"

#include <set>
#include <tuple>

#include "preloaded.hpp"
#include "provenance.hpp"
#include "row_split.hpp"

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
