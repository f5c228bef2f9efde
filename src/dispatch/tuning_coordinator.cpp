#include "tuning_coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <utility>

#include "candidate_provider.hpp"
#include "lease_group.hpp"
#include "log.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "shape_key.hpp"
#include "tuning_history.hpp"
#include "utc_time.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

namespace {
std::atomic<std::uint64_t> tuning_count{0};

// The info line that ends a tuning. Where the budget ran out while candidates it selected were
// still compiling (a machine whose cache holds few CUBINs yet), it says so and what avoids it: a
// tuning on a precompiled cache screens more of its selection, and may find a faster kernel.
std::string tuned_line(const Problem& problem, const tuner::TuneOutcome& outcome) {
  std::string line = "tuned " + describe(problem) + " in " + std::to_string(outcome.seconds) +
                     " s: " + outcome.winner;
  if (outcome.still_compiling > 0)
    line += "; the budget ran out with " + std::to_string(outcome.still_compiling) +
            " candidates still compiling and " + std::to_string(outcome.unscreened) +
            " of its selection unscreened (tilemm-tune --precompile compiles every variant once "
            "per machine)";
  return line;
}
}  // namespace

std::uint64_t TuningCoordinator::tunings_counted() {
  return tuning_count.load(std::memory_order_relaxed);
}

std::optional<std::string> TuningCoordinator::known_winner(const DeviceInfo& device, const Problem& problem) {
  std::optional<std::string> winner = results_.stored_winner(device, problem);
  if (winner) binaries_.decision_for(device, *winner);
  return winner;
}

std::string tuning_lease_key(const DeviceInfo& device, const Problem& problem) {
  std::string key = device.model_key() + "|" + describe(problem);
  // A tuning of own kernels only stores another result than one with vendor candidates: neither
  // waits for the other.
  if (candidate_set_of(problem) == cache::CandidateSet::own_only) key += "|own kernels only";
  return key;
}

std::optional<AutotuneResult> TuningCoordinator::published_result(const DeviceInfo& device,
                                                                  const Problem& problem,
                                                                  const Options& options) {
  if (auto entry = results_.usable_entry(device, problem))
    return to_result(*entry, problem, source_of(entry->source));
  if (auto entry = fleet_.usable_entry(device, problem, options)) {
    log(LogLevel::info, "shape " + describe(problem) + " served from the fleet's store: " +
                            entry->winner);
    return to_result(*entry, problem, ResultSource::remote);
  }
  return std::nullopt;
}

// The local store's lease (the processes of this machine) and, with a fleet store, the fleet's
// (the machines sharing it), taken together and renewed while tuning.
AutotuneResult TuningCoordinator::tune_once(const DeviceInfo& device, const Problem& problem,
                                            const Options& options, const detail::TuneHooks* hooks) {
  const LeaseTimes& times = lease_;
  const std::string key = tuning_lease_key(device, problem);
  const std::string owner =
      hooks != nullptr && !hooks->lease_owner.empty() ? hooks->lease_owner : lease_owner_;
  std::vector<LeaseHolder> holders;
  holders.push_back(LeaseHolder{
      [this, &key, &owner, &times] {
        return store_.with("cache lease unavailable, tuning without one", true,
                           [&](ResultStore& store) {
                             return store.try_acquire_lease(key, owner, times.lease_seconds);
                           });
      },
      // Renewed on its own thread through the connection the tuning's thread uses: a background
      // worker's renewal must not wait behind its own writes on the callers' connection, nor a
      // caller behind the renewal.
      [this, &key, &owner, &times, on_worker = GuardedStore::WorkerScope::active()] {
        std::optional<GuardedStore::WorkerScope> same_connection;
        if (on_worker) same_connection.emplace();
        store_.with("", false, [&](ResultStore& store) {
          return store.try_acquire_lease(key, owner, times.lease_seconds);
        });
      },
      [this, &key, &owner] {
        store_.with("", false, [&](ResultStore& store) {  // else it expires on its own
          store.release_lease(key, owner);
          return true;
        });
      }});
  double renew_seconds = times.lease_seconds / 3;
  if (RemoteStore* remote = fleet_.remote_for(options.remote_cache)) {
    holders.push_back(LeaseHolder{
        [remote, &key, &owner, &times] {
          return remote->try_acquire_lease(key, owner, times.remote_lease_seconds);
        },
        [remote, &key, &owner, &times] {
          remote->renew_lease(key, owner, times.remote_lease_seconds);
        },
        [remote, &key, &owner] { remote->release_lease(key, owner); }});
    renew_seconds = std::min(renew_seconds, times.remote_lease_seconds / 3);
  }
  const auto renew_every = std::chrono::milliseconds(
      std::max<long long>(10, static_cast<long long>(renew_seconds * 1000)));
  const auto start = std::chrono::steady_clock::now();
  bool announced = false;
  while (true) {
    if (const auto held = HeldLeases::try_take(holders, renew_every)) {
      // The leases may be free because another process just finished tuning this key and stored
      // its result after our miss: serve that result rather than tune the key twice.
      if (!options.force)
        if (auto published = published_result(device, problem, options)) return *published;
      return tune_and_store(device, problem, options, hooks);
    }
    if (!options.force)
      if (auto published = published_result(device, problem, options)) return *published;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > times.max_wait_seconds) {
      log(LogLevel::warn, "waited " + std::to_string(waited) + " s for another process tuning " +
                              describe(problem) + "; tuning here");
      return tune_and_store(device, problem, options, hooks);
    }
    if (!announced) {
      log(LogLevel::info, "another process is tuning " + describe(problem) + "; waiting for its result");
      announced = true;
    }
    detail::stop_if_requested(hooks);
    std::this_thread::sleep_for(times.poll);
  }
}

AutotuneResult TuningCoordinator::tune_and_store(const DeviceInfo& device, const Problem& problem,
                                                 const Options& options,
                                                 const detail::TuneHooks* hooks) {
  log(LogLevel::info, "tuning " + describe(problem) + " on " + device.name);
  TuneRequest request;
  request.progress = options.progress;
  request.hooks = hooks;
  request.compile = [this, &device, hooks = request.hooks](const Variant& v, const std::string&) {
    detail::stop_if_requested(hooks);
    return binaries_.candidate_binary(device, v);
  };
  request.start_compile = [this, &device](const Variant& v, const std::string&) {
    return binaries_.start_candidate_compile(device, v);
  };
  request.budget_ms = options.tune_budget_ms;
  if (request.budget_ms > 0) request.history = history_for(device, problem);
  // A plan's part with a result already (unless forced to measure anew) is not tuned again.
  if (!options.force)
    for (const std::int64_t rows : detail::row_split_heights(problem))
      for (const Problem& part : detail::row_split_parts(problem, rows))
        if (auto winner = known_winner(device, part)) request.known_part_winners[part.M] = *winner;
  // Below highest, the FP32 results known for the shape and its parts are candidates too, timed
  // on the same bench (even when forced: only their names are taken), so that asking for less
  // precision does not end slower than highest (docs/tuning.md, "Precision modes").
  if (problem.precision != Precision::highest) {
    Problem fp32 = problem;
    fp32.precision = Precision::highest;
    if (auto winner = results_.stored_winner(device, fp32)) {
      request.highest_winner = *winner;
      log(LogLevel::info, "the highest result of " + describe(problem) + ", " + *winner +
                              ", is timed among its candidates");
    }
    for (const std::int64_t rows : detail::row_split_heights(problem))
      for (const Problem& part : detail::row_split_parts(fp32, rows))
        if (auto winner = results_.stored_winner(device, part))
          request.highest_part_winners[part.M] = *winner;
  }
  const tuner::ShapeTuning tuning = tuner_.tune(device, problem, request);
  tuning_count.fetch_add(1 + tuning.parts.size(), std::memory_order_relaxed);
  tunings_run_.fetch_add(1 + tuning.parts.size(), std::memory_order_relaxed);
  // A tuning told to stop may have finished with candidates cut short: store none of it.
  detail::stop_if_requested(request.hooks);

  const std::string tuned_at = detail::utc_now_text("%Y-%m-%dT%H:%M:%SZ");
  std::vector<cache::StoredEntry> entries;
  for (const auto& part : tuning.parts)
    entries.push_back(entry_of(device, part.problem, part.outcome, tuned_at));
  entries.push_back(entry_of(device, problem, tuning.outcome, tuned_at));
  // Under the candidate set it chose from: a tuning of own kernels only is stored beside a
  // result chosen with vendor candidates, never over it (provenance.hpp, set_serves).
  store_.with("could not store the tuning result", false, [&](ResultStore& store) {
    store.put_all(entries);
    return true;
  });
  fleet_.publish(options, entries);  // results only: the CUBINs stay on this machine
  for (const auto& part : tuning.parts) {
    // A part is never a plan; a provider's winner has no CUBIN.
    if (!detail::provider_of(part.outcome.winner)) binaries_.save(device, part.outcome.winner_binary);
    log(LogLevel::info, tuned_line(part.problem, part.outcome));
  }
  if (!detail::parse_row_split(tuning.outcome.winner) && !detail::provider_of(tuning.outcome.winner))
    binaries_.save(device, tuning.outcome.winner_binary);
  log(LogLevel::info, tuned_line(problem, tuning.outcome));
  AutotuneResult r = to_result(entries.back(), problem, ResultSource::tuned);
  r.tuning_seconds = tuning.outcome.seconds;
  return r;
}

std::vector<tuner::MeasuredShape> TuningCoordinator::history_for(const DeviceInfo& device,
                                                         const Problem& problem) {
  // The entries without candidates first, then the candidates of those of the problem's class and
  // precision one entry at a time: an entry holds hundreds, and while the store's lock is held a
  // caller's lookup waits (gemm() on another shape while this tuning runs in the background).
  // Only the nearest of the class count (history_headers), and an entry read for an earlier tuning
  // and not rewritten since is not read again.
  std::vector<cache::StoredEntry> cached;
  for (const cache::StoredEntry& header :
       history_headers(results_.listed(device, false), device, problem)) {
    if (auto entry = history_.entry(header, [this](const cache::StoredEntry& h) {
          return results_.with_candidates(h);
        }))
      cached.push_back(std::move(*entry));
  }
  return measured_shapes(cached, results_.preloaded_timed(), device, class_of(problem),
                         problem.precision);
}

}  // namespace tilemm::dispatch
