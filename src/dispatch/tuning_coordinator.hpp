// Tunes a shape once across the processes sharing a store: takes the store's lease (waiting for
// another process's result while it holds it), builds the tuning request (the known winners of
// a plan's parts, the highest results below highest, the measured history a budgeted search
// ranks by), and stores what the tuning found.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "binary_cache.hpp"
#include "collaborators.hpp"
#include "guarded_store.hpp"
#include "stored_results.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/device.hpp"

namespace tilemm::dispatch {

class TuningCoordinator {
 public:
  TuningCoordinator(GuardedStore& store, StoredResults& results, BinaryCache& binaries,
                    ShapeTuner& tuner, std::string lease_owner, LeaseTimes lease)
      : store_(store),
        results_(results),
        binaries_(binaries),
        tuner_(tuner),
        lease_owner_(std::move(lease_owner)),
        lease_(lease) {}

  // The shape's result: tuned here under the lease, or another process's that it stored while
  // this one waited. A lease expires, so a process that died while tuning blocks the key for at
  // most lease_seconds; a waiter gives up after max_wait_seconds and tunes itself. `hooks` (may
  // be null) go with the tuning: its lease owner, skips, callbacks and stop.
  AutotuneResult tune_once(const DeviceInfo& device, const Problem& problem, const Options& options,
                           const detail::TuneHooks* hooks);

  // Tunings run in this process (a plan's parts count as tunings).
  static std::uint64_t tunings_counted();

 private:
  AutotuneResult tune_and_store(const DeviceInfo& device, const Problem& problem,
                                const Options& options, const detail::TuneHooks* hooks);
  // A part's winner known without tuning (cache, then preloaded), loaded so that the bench finds
  // its kernel; nullopt when the part must be tuned.
  std::optional<std::string> known_winner(const DeviceInfo& device, const Problem& problem);
  // The measured shapes a budgeted tuning of `problem` ranks its candidates by.
  std::vector<tuner::MeasuredShape> history_for(const DeviceInfo& device, const Problem& problem);

  GuardedStore& store_;
  StoredResults& results_;
  BinaryCache& binaries_;
  ShapeTuner& tuner_;
  std::string lease_owner_;
  LeaseTimes lease_;
};

}  // namespace tilemm::dispatch
