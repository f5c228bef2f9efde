// Tunes a shape once across the processes sharing a store and the machines sharing a fleet's
// store: takes the local store's lease and the fleet's (lease_group.hpp; waiting for another
// process's result while either is held elsewhere), builds the tuning request (the known winners of
// a plan's parts, the highest results below highest, the measured history a budgeted search
// ranks by), and stores what the tuning found locally and publishes it to the fleet.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "binary_cache.hpp"
#include "collaborators.hpp"
#include "fleet_results.hpp"
#include "guarded_store.hpp"
#include "history_memo.hpp"
#include "stored_results.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/device.hpp"

namespace tilemm::dispatch {

class TuningCoordinator {
 public:
  TuningCoordinator(GuardedStore& store, StoredResults& results, FleetResults& fleet,
                    BinaryCache& binaries, ShapeTuner& tuner, std::string lease_owner,
                    LeaseTimes lease)
      : store_(store),
        results_(results),
        fleet_(fleet),
        binaries_(binaries),
        tuner_(tuner),
        lease_owner_(std::move(lease_owner)),
        lease_(lease) {}

  // The shape's result: tuned here under the leases, or another process's or node's that it
  // stored or published while this one waited. A lease expires, so a process that died while
  // tuning blocks the key for at most lease_seconds (remote_lease_seconds in the fleet: the
  // fleet's lease is renewed while its owner tunes); a waiter gives up after max_wait_seconds
  // and tunes itself. `hooks` (may be null) go with the tuning: its lease owner, skips,
  // callbacks and stop.
  AutotuneResult tune_once(const DeviceInfo& device, const Problem& problem, const Options& options,
                           const detail::TuneHooks* hooks);

  // Tunings run in this process (a plan's parts count as tunings).
  static std::uint64_t tunings_counted();
  // Those this coordinator ran.
  std::uint64_t tunings_run() const { return tunings_run_.load(std::memory_order_relaxed); }

 private:
  // What another process or node stored for `problem` while this one waited: the local cache's
  // result, else the fleet's.
  std::optional<AutotuneResult> published_result(const DeviceInfo& device, const Problem& problem,
                                                 const Options& options);
  AutotuneResult tune_and_store(const DeviceInfo& device, const Problem& problem,
                                const Options& options, const detail::TuneHooks* hooks);
  // A part's winner known without tuning (cache, then preloaded), loaded so that the bench finds
  // its kernel; nullopt when the part must be tuned.
  std::optional<std::string> known_winner(const DeviceInfo& device, const Problem& problem);
  // The measured shapes a budgeted tuning of `problem` ranks its candidates by.
  std::vector<tuner::MeasuredShape> history_for(const DeviceInfo& device, const Problem& problem);

  GuardedStore& store_;
  StoredResults& results_;
  FleetResults& fleet_;
  BinaryCache& binaries_;
  ShapeTuner& tuner_;
  std::string lease_owner_;
  LeaseTimes lease_;
  std::atomic<std::uint64_t> tunings_run_{0};
  HistoryMemo history_;  // the cache's entries history_for read, with their timed candidates
};

// The key of the tuning lease of `problem` on `device` (the same in the local cache and the
// fleet's store): "<device model key>|<describe(problem)>", with "|own kernels only" appended
// where the tuning chooses among own kernels only (candidate_set_of).
std::string tuning_lease_key(const DeviceInfo& device, const Problem& problem);

}  // namespace tilemm::dispatch
