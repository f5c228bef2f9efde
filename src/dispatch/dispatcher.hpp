// The dispatcher: per process, what runs each shape (the memo, behind per-shape locks), found by
// walking the resolution order (resolution.hpp) over its parts: the stored results
// (stored_results.hpp), the fleet's store (fleet_results.hpp), a tuning under the cross-process lease (tuning_coordinator.hpp) or the
// fallback (fallback_policy.hpp); winners are made ready by the binary cache (binary_cache.hpp).
// What they reach below are interfaces (collaborators.hpp), so that the logic is tested on the
// CPU with fakes (tests/dispatcher_rig.hpp); src/api wires the real ones (real_collaborators.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "background_tuning.hpp"
#include "binary_cache.hpp"
#include "collaborators.hpp"
#include "decision.hpp"
#include "fleet_results.hpp"
#include "guarded_store.hpp"
#include "resolution.hpp"
#include "shape_key.hpp"
#include "stored_results.hpp"
#include "tilemm/autotune.hpp"
#include "tuning_coordinator.hpp"

namespace tilemm::detail {
class StepTimes;  // log.hpp
}

namespace tilemm::dispatch {

class Dispatcher {
 public:
  explicit Dispatcher(Collaborators parts);
  // Stops the background workers first (BackgroundTuning::stop): a tuning in flight stores
  // nothing.
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // The memo's decision for `key`: a shared lock and one hash lookup, nothing else.
  std::optional<Decision> find(const ShapeKey& key) {
    std::shared_lock<std::shared_mutex> lock(memo_mutex_);
    const auto it = memo_.find(key);
    if (it == memo_.end()) return std::nullopt;
    return it->second;
  }

  // What gemm() runs for `problem` on `device` under `options` (options.force is not gemm()'s),
  // resolved and remembered. A fallback is resolved again by a call that may tune.
  Decision resolve(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                   const Options& options);

  // What autotune() returns: from the cache, the fleet's store, the preloaded results, a tuning or the fallback.
  // The winner (and a plan's parts) is made ready for gemm() and remembered whatever the source.
  AutotuneResult autotune(const DeviceInfo& device, const Problem& problem, const Options& options);

  // Tunings run by every dispatcher of this process (a plan's parts count as tunings).
  static std::uint64_t tunings_counted();
  // Tunings run by this dispatcher.
  std::uint64_t tunings_run() const { return coordinator_.tunings_run(); }

  // Blocks until no background tuning is queued or running (tests, benchmarks).
  void wait_for_background_tunings();

 private:
  struct Found {
    Source source = Source::fallback;
    AutotuneResult result;  // winner always; the rest when the call wants a result
    std::optional<Decision> decision;  // Source::memory's answer
  };

  std::shared_ptr<std::mutex> lock_for(const ShapeKey& key);
  std::optional<Found> ask(Source source, const DeviceInfo& device, const Problem& problem,
                           const Call& call, const Options& options);
  // Asks the sources in the resolution order; `steps`, when given, marks each source asked.
  Found lookup(const DeviceInfo& device, const Problem& problem, const Call& call,
               const Options& options, detail::StepTimes* steps = nullptr);
  void remember(const ShapeKey& key, const Decision& decision);

  // resolve() with the hooks of the tuning it may start.
  Decision resolve_with(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                        const Options& options, const detail::TuneHooks* hooks);
  void queue_background_tuning(const DeviceInfo& device, const Problem& problem,
                               const ShapeKey& key, const Options& options);
  // A background worker's job: the tune_on_miss path under the worker's hooks, then the winner
  // remembered.
  AutotuneResult tune_in_background(const BackgroundJob& job, const detail::TuneHooks& hooks);
  // What gemm() runs for what `found` answered: the winner (a plan's parts too, resolved under
  // `hooks`) made ready, a background policy's fallback queued.
  Decision ready(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                 const Found& found, const Options& options, const detail::TuneHooks* hooks);
  // Runs a provider's candidate that `decision` names once, if it has not run yet
  // (PreparedCandidate::warmed), so that a background caller never makes its first launch.
  void run_first_launch(const DeviceInfo& device, const Problem& problem, const Decision& decision);
  // The hooks of the tunings this dispatcher's callers start (Collaborators::hooks), or null.
  const detail::TuneHooks* caller_hooks() const { return parts_.hooks.empty() ? nullptr : &parts_.hooks; }

  Collaborators parts_;
  GuardedStore store_;
  StoredResults results_;
  FleetResults fleet_;
  BinaryCache binaries_;
  TuningCoordinator coordinator_;
  std::shared_mutex memo_mutex_;
  std::unordered_map<ShapeKey, Decision, ShapeKeyHash> memo_;
  std::mutex locks_mutex_;
  std::map<ShapeKey, std::shared_ptr<std::mutex>> key_locks_;
  // Last: its workers use everything above, so it stops before any of it is destroyed.
  std::unique_ptr<BackgroundTuning> background_;
};

}  // namespace tilemm::dispatch
