#include "dispatcher.hpp"

#include <optional>
#include <utility>

#include "fallback_policy.hpp"
#include "log.hpp"
#include "no_wait.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "tilemm/error.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

bool resolves_again(const Decision& decision, TunePolicy policy) {
  if (!decision.fallback) return false;
  return policy == TunePolicy::tune_on_miss ||
         (policy == TunePolicy::background && !decision.queued);
}

namespace {

Collaborators checked(Collaborators parts) {
  if (!parts.store || !parts.loader || !parts.tuner || !parts.preloaded_with_candidates ||
      !parts.preloaded_headers || !parts.preloaded_timed)
    throw Error(ErrorKind::internal, "tilemm: a dispatcher needs a store, a loader, a tuner and "
                                     "the preloaded results");
  return parts;
}

}  // namespace

Dispatcher::Dispatcher(Collaborators parts)
    : parts_(checked(std::move(parts))),
      store_(*parts_.store),
      results_(store_, parts_.preloaded_with_candidates, parts_.preloaded_headers,
               parts_.preloaded_timed),
      fleet_(store_, parts_.open_remote),
      binaries_(store_, *parts_.loader),
      coordinator_(store_, results_, fleet_, binaries_, *parts_.tuner, parts_.lease_owner,
                   parts_.lease) {
  background_ = std::make_unique<BackgroundTuning>(
      [this](const BackgroundJob& job, const detail::TuneHooks& hooks) {
        return tune_in_background(job, hooks);
      },
      parts_.lease_owner + " background", parts_.enter_device, parts_.drain_device);
}

Dispatcher::~Dispatcher() { background_->stop(); }

void Dispatcher::wait_for_background_tunings() { background_->wait_until_idle(); }

// TunePolicy::background: the shape is tuned on its device's worker the way a tune_on_miss call
// would tune it (under the lease, stored, then remembered), while its callers run the fallback.
void Dispatcher::queue_background_tuning(const DeviceInfo& device, const Problem& problem,
                                         const ShapeKey& key, const Options& options) {
  BackgroundJob job{key, device, problem, options};
  job.options.policy = TunePolicy::tune_on_miss;
  if (background_->enqueue(std::move(job)))
    log(LogLevel::info, "shape " + describe(problem) + " runs its fallback while it is tuned in "
                                                       "the background");
}

std::uint64_t Dispatcher::tunings_counted() { return TuningCoordinator::tunings_counted(); }

std::shared_ptr<std::mutex> Dispatcher::lock_for(const ShapeKey& key) {
  std::lock_guard<std::mutex> lock(locks_mutex_);
  auto& m = key_locks_[key];
  if (!m) m = std::make_shared<std::mutex>();
  return m;
}

void Dispatcher::remember(const ShapeKey& key, const Decision& decision) {
  std::unique_lock<std::shared_mutex> lock(memo_mutex_);
  memo_[key] = decision;
}

Decision Dispatcher::resolve(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                             const Options& options) {
  return resolve_with(device, problem, key, options, caller_hooks());
}

Decision Dispatcher::resolve_with(const DeviceInfo& device, const Problem& problem,
                                  const ShapeKey& key, const Options& options,
                                  const detail::TuneHooks* hooks) {
  // With TILEMM_LOG=debug a line says where a first call's time went.
  detail::StepTimes steps;
  const auto key_lock = lock_for(key);
  std::lock_guard<std::mutex> guard(*key_lock);
  steps.mark("the shape's lock");
  const Call call{options.policy, false, false, hooks};
  Decision decision;
  if (problem.K == 0) {
    // C = beta * C: every variant does this; there is nothing to tune.
    if (auto known = find(key)) return *known;
    decision = {&binaries_.load(device, default_variant()), false};
    steps.mark("kernel ready");
  } else {
    // A background caller waits for no vendor library (no_wait.hpp): a stored winner whose
    // provider has not loaded, prepared or first run it yet runs as a fallback until the worker
    // has (ready()).
    std::optional<detail::NoWaitScope> no_wait;
    if (options.policy == TunePolicy::background) no_wait.emplace();
    Found found;
    try {
      found = lookup(device, problem, call, options, &steps);
      if (found.source == Source::memory) return *found.decision;
      decision = binaries_.decision_for(device, found.result.winner);
      if (decision.prepared != nullptr && !decision.prepared->warmed())
        detail::refuse_wait(found.result.winner + "'s first run");
    } catch (const detail::WouldWait& wait) {
      log(LogLevel::info, "shape " + describe(problem) + " runs its fallback until the background "
                          "worker has made its stored winner ready: it needs " + wait.what());
      found = *ask(Source::fallback, device, problem, call, options);
      decision = binaries_.decision_for(device, found.result.winner);
    }
    steps.mark("kernel ready");
    decision.fallback = found.source == Source::fallback;
    if (decision.fallback && options.policy == TunePolicy::background) {
      queue_background_tuning(device, problem, key, options);
      decision.queued = true;
      steps.mark("queued");
    }
  }
  remember(key, decision);
  steps.log_total("gemm() resolved " + describe(problem));
  return decision;
}

AutotuneResult Dispatcher::autotune(const DeviceInfo& device, const Problem& problem,
                                    const Options& options) {
  const ShapeKey key = key_of(device.ordinal, problem);
  const auto key_lock = lock_for(key);
  std::lock_guard<std::mutex> guard(*key_lock);
  const Found found =
      lookup(device, problem, Call{options.policy, options.force, true, caller_hooks()}, options);
  remember(key, ready(device, problem, key, found, options, caller_hooks()));
  return found.result;
}

// The shape's lock is taken only to remember the winner, not while tuning: a caller of the shape
// is never held by the worker. A caller that tunes the shape itself meanwhile (tune_on_miss) finds
// the worker's lease, whose owner is not the process's own, and waits for its result as it
// would for another process's.
AutotuneResult Dispatcher::tune_in_background(const BackgroundJob& job,
                                              const detail::TuneHooks& hooks) {
  const GuardedStore::WorkerScope own_connection;
  const Found found =
      lookup(job.device, job.problem,
             Call{TunePolicy::tune_on_miss, job.options.force, true, &hooks}, job.options);
  const auto key_lock = lock_for(job.key);
  std::lock_guard<std::mutex> guard(*key_lock);
  remember(job.key, ready(job.device, job.problem, job.key, found, job.options, &hooks));
  return found.result;
}

// The winner is made ready whatever the source: loaded here, and its CUBIN in the cache, so
// that later gemm() calls in this and other processes compile nothing. A row-split plan's
// parts are made ready the way gemm() would resolve them.
Decision Dispatcher::ready(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                           const Found& found, const Options& options,
                           const detail::TuneHooks* hooks) {
  Decision decision = binaries_.decision_for(device, found.result.winner);
  run_first_launch(device, problem, decision);
  // Like resolve(): a fallback is tried again when a later call may tune.
  decision.fallback = found.source == Source::fallback;
  if (decision.fallback && options.policy == TunePolicy::background) {
    queue_background_tuning(device, problem, key, options);
    decision.queued = true;
  }
  if (decision.split_rows > 0) {
    Options parts = options;
    parts.force = false;
    for (const Problem& part : detail::row_split_parts(problem, decision.split_rows)) {
      auto known = find(key_of(device.ordinal, part));
      if (!known || resolves_again(*known, parts.policy))
        known = resolve_with(device, part, key_of(device.ordinal, part), parts, hooks);
      run_first_launch(device, part, *known);
    }
  }
  return decision;
}

void Dispatcher::run_first_launch(const DeviceInfo& device, const Problem& problem,
                                  const Decision& decision) {
  if (decision.prepared == nullptr || decision.prepared->warmed()) return;
  if (parts_.warm_up) parts_.warm_up(device, problem, *decision.prepared);
  decision.prepared->set_warmed();
}

Dispatcher::Found Dispatcher::lookup(const DeviceInfo& device, const Problem& problem,
                                     const Call& call, const Options& options,
                                     detail::StepTimes* steps) {
  for (const Source source : kResolutionOrder) {
    if (!may_answer(source, call)) continue;
    auto found = ask(source, device, problem, call, options);
    if (steps != nullptr) steps->mark(to_string(source));
    if (found) return std::move(*found);
  }
  throw Error(ErrorKind::internal, "tilemm: no source answered for " + describe(problem));
}

std::optional<Dispatcher::Found> Dispatcher::ask(Source source, const DeviceInfo& device,
                                                 const Problem& problem, const Call& call,
                                                 const Options& options) {
  Found found;
  found.source = source;
  switch (source) {
    case Source::memory: {
      // Another thread may have resolved this shape while we waited for its lock. A fallback
      // serves only calls that may not tune.
      const auto known = find(key_of(device.ordinal, problem));
      if (!known || resolves_again(*known, call.policy)) return std::nullopt;
      found.decision = known;
      return found;
    }
    case Source::cache: {
      const auto entry = results_.fresh_entry(device, problem, call.wants_result);
      if (!entry) return std::nullopt;
      if (const std::string unusable = why_unusable(entry->winner, device, problem); !unusable.empty()) {
        log(LogLevel::warn, "cached winner " + entry->winner + " for " + describe(problem) +
                                " is ignored: " + unusable);
        return std::nullopt;
      }
      log(LogLevel::info, "shape " + describe(problem) + " served from the cache (" +
                              entry->source + "): " + entry->winner);
      found.result = to_result(*entry, problem, source_of(entry->source));
      return found;
    }
    case Source::remote: {
      const auto entry = fleet_.usable_entry(device, problem, options);
      if (!entry) return std::nullopt;
      log(LogLevel::info, "shape " + describe(problem) + " served from the fleet's store: " +
                              entry->winner);
      found.result = to_result(*entry, problem, ResultSource::remote);
      return found;
    }
    case Source::preloaded: {
      const auto entry = results_.preloaded_entry(device, problem, call.wants_result);
      // Names were validated when the preloaded files were read.
      if (!entry || !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
      log(LogLevel::info, "shape " + describe(problem) + " served from the preloaded cache (" +
                              entry->device_key + "): " + entry->winner);
      found.result = to_result(*entry, problem, ResultSource::preloaded);
      return found;
    }
    case Source::tuning:
      found.result = coordinator_.tune_once(device, problem, options, call.hooks);
      return found;
    case Source::fallback:
      // Asked not to tune: report what gemm() runs, without timing it.
      found.result.device_key = device.model_key();
      found.result.problem = problem;
      found.result.problem_class = class_of(problem);
      found.result.winner = variant_name(fallback_variant(results_, device, problem));
      found.result.source = ResultSource::fallback;
      return found;
  }
  return std::nullopt;
}

}  // namespace tilemm::dispatch
