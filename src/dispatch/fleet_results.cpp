#include "fleet_results.hpp"

#include <utility>

#include "log.hpp"
#include "provenance.hpp"
#include "shape_key.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

RemoteStore* FleetResults::remote_for(const std::string& url) {
  if (url.empty() || !open_) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = remotes_.find(url); it != remotes_.end()) return it->second.get();
  auto opened = open_(url);
  return remotes_.emplace(url, std::move(opened)).first->second.get();
}

std::optional<cache::StoredEntry> FleetResults::usable_entry(const DeviceInfo& device,
                                                             const Problem& problem,
                                                             const Options& options) {
  RemoteStore* remote = remote_for(options.remote_cache);
  if (remote == nullptr) return std::nullopt;
  auto entry = first_serving_entry(
      problem,
      [&](cache::CandidateSet set) {
        return remote->find(device.model_key(), problem, class_of(problem), set);
      },
      [&](cache::StoredEntry& found) {
        // Another machine's measurement, held to the rule of an imported one: never
        // "preloaded", whose staleness rule compares the results hash alone.
        found.source = "imported";
        if (!is_fresh(found, running_versions(device, problem))) {
          log(LogLevel::info, "the fleet's result for " + describe(problem) +
                                  " is stale (tuned under another driver, NVRTC, timing method "
                                  "or set of kernels for its shape)");
          return false;
        }
        if (const std::string unusable = why_unusable(found.winner, device, problem);
            !unusable.empty()) {
          log(LogLevel::warn, "the fleet's winner " + found.winner + " for " + describe(problem) +
                                  " is ignored: " + unusable);
          return false;
        }
        return true;
      });
  if (!entry) return std::nullopt;
  store_.with("could not copy the fleet's result into the cache", false, [&](ResultStore& store) {
    store.put_all({*entry});
    return true;
  });
  return entry;
}

void FleetResults::publish(const Options& options, const std::vector<cache::StoredEntry>& entries) {
  if (RemoteStore* remote = remote_for(options.remote_cache)) remote->publish(entries);
}

}  // namespace tilemm::dispatch
