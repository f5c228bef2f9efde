#include "fallback_policy.hpp"

#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "candidate_provider.hpp"
#include "candidate_ranking.hpp"
#include "log.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "shape_key.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

Variant fallback_variant(StoredResults& results, const DeviceInfo& device, const Problem& problem) {
  std::optional<Variant> best;
  std::string best_source;
  double best_distance = std::numeric_limits<double>::infinity();
  const std::string wanted_class = class_of(problem);
  // Entries of another class, stale ones, row-split plans, providers' candidates (chosen for
  // their own shape) and variants of a newer build (not one kernel this build can run) and
  // winners that cannot run this problem do not count.
  // Freshness is asked last: it is the results hash of the entry's own shape (memoized per shape,
  // but computed once for each shape the first time).
  const auto consider = [&](const cache::StoredEntry& e, const char* source,
                            const std::function<bool(const cache::StoredEntry&)>& fresh) {
    if (e.problem_class != wanted_class || e.precision != problem.precision) return;
    const double d = tuner::log_distance(e.M, e.N, e.K, problem);
    if (d >= best_distance || detail::parse_row_split(e.winner) || detail::provider_of(e.winner) ||
        !why_unusable(e.winner, device, problem).empty() || !fresh(e))
      return;
    best = parse_variant(e.winner);
    best_source = source;
    best_distance = d;
  };
  for (const auto& e : results.listed(device, false))
    consider(e, "cache", [&](const cache::StoredEntry& x) {
      return is_fresh(x, running_versions(device, x));
    });
  // The shipped results of this device model or architecture count as tuned shapes too: with
  // tuning off and an empty cache, an H200 still runs a tuned kernel, not the default.
  for (const auto& e : results.preloaded_headers())
    consider(e, "preloaded cache", [&](const cache::StoredEntry& x) {
      return cache::preloaded_applies(x, device.model_key(), device.arch(),
                                      running_versions(device, x));
    });
  if (best) {
    log(LogLevel::info, "tuning is off: " + describe(problem) + " uses the nearest tuned shape's " +
                            variant_name(*best) + " (" + best_source + ")");
    return *best;
  }
  Variant fallback = parse_variant("naive");
  for (const Variant& v : {default_variant(problem.precision), default_variant()})
    if (can_run(v, device, problem)) {
      fallback = v;
      break;
    }
  std::string accuracy;
  if (const Precision runs = precision_of(fallback); runs != problem.precision)
    accuracy = std::string(" (precision ") + to_string(runs) + ": this device has no " +
               to_string(problem.precision) + " kernel for it)";
  log(LogLevel::info, "tuning is off and nothing is tuned near " + describe(problem) +
                          ": default variant " + variant_name(fallback) + accuracy);
  return fallback;
}

}  // namespace tilemm::dispatch
