#include "dispatcher.hpp"

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include "kernel_sources.hpp"
#include "log.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "tflops.hpp"
#include "tilemm/error.hpp"
#include "tuner.hpp"
#include "tuning_history.hpp"
#include "utc_time.hpp"

namespace tilemm::dispatch {

using detail::LoadedKernel;
using detail::log;
using detail::LogLevel;

namespace {

// The SHA-256 of the template `v` is compiled from: part of the key of its stored CUBIN.
std::string template_hash_of(const Variant& v) {
  return std::string(detail::template_of(v).sha256);
}

std::string unusable_cubin_warning(const Variant& v) {
  return "cached CUBIN of " + variant_name(v) + " unusable, recompiling";
}

std::atomic<std::uint64_t> tuning_count{0};

ResultSource source_of(const std::string& stored) {
  if (stored == "imported") return ResultSource::imported;
  if (stored == "preloaded") return ResultSource::preloaded;
  return ResultSource::cache;
}

AutotuneResult to_result(const cache::StoredEntry& e, const Problem& problem, ResultSource source) {
  AutotuneResult r;
  r.device_key = e.device_key;
  r.problem = problem;
  r.problem_class = e.problem_class;
  r.winner = e.winner;
  r.median_ms = e.median_ms;
  r.tflops = e.tflops;
  r.margin = e.margin;
  r.candidates = e.candidates;
  // Stored rows come back in key order; present them ranked like a fresh tuning.
  if (!r.candidates.empty()) {
    try {
      tuner::rank_candidates(r.candidates);
    } catch (const Error&) {  // an entry without an ok candidate: keep the stored order
    }
  }
  r.source = source;
  r.tuned_at = e.tuned_at;
  return r;
}

// The stored record of a tuning of `problem` on `device`.
cache::StoredEntry entry_of(const DeviceInfo& device, const Problem& problem,
                            const tuner::TuneOutcome& outcome, const std::string& tuned_at) {
  cache::StoredEntry e;
  e.device_key = device.model_key();
  e.M = problem.M;
  e.N = problem.N;
  e.K = problem.K;
  e.problem_class = class_of(problem);
  e.precision = problem.precision;
  e.winner = outcome.winner;
  e.median_ms = outcome.median_ms;
  e.tflops = detail::tflops(problem, outcome.median_ms);
  e.margin = outcome.margin;
  e.tuned_at = tuned_at;
  e.tilemm_version = TILEMM_VERSION;
  e.versions = running_versions(device, problem.precision);
  e.arch = device.arch();
  e.source = "tuned";
  e.candidates = outcome.candidates;
  return e;
}

}  // namespace

std::string class_of(const Problem& p) {
  return "a" + std::to_string(p.alignment) + (dense_leading_dimensions(p) ? "-dense" : "-strided");
}

std::string describe(const Problem& p) {
  // Highest is left out: its lines and lease keys read as they did before precision modes.
  const std::string precision =
      p.precision == Precision::highest ? "" : std::string(", ") + to_string(p.precision);
  return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) + " (" +
         class_of(p) + precision + ")";
}

bool resolves_again(const Decision& decision, TunePolicy policy) {
  if (!decision.fallback) return false;
  return policy == TunePolicy::tune_on_miss ||
         (policy == TunePolicy::background && !decision.queued);
}

Dispatcher::Dispatcher(Collaborators parts) : parts_(std::move(parts)) {
  if (!parts_.store || !parts_.loader || !parts_.tuner || !parts_.preloaded ||
      !parts_.preloaded_headers)
    throw Error(ErrorKind::internal, "tilemm: a dispatcher needs a store, a loader, a tuner and "
                                     "the preloaded results");
  background_ = std::make_unique<BackgroundTuning>(
      [this](const BackgroundJob& job) { return tune_in_background(job); },
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

std::uint64_t Dispatcher::tunings_counted() { return tuning_count.load(std::memory_order_relaxed); }

template <class F, class R>
R Dispatcher::with_store(const std::string& failure, R otherwise, F&& f) {
  std::lock_guard<std::mutex> lock(store_mutex_);
  try {
    return f(*parts_.store);
  } catch (const Error& e) {
    if (!failure.empty()) log(LogLevel::warn, failure + ": " + e.what());
    return otherwise;
  }
}

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
  const auto key_lock = lock_for(key);
  std::lock_guard<std::mutex> guard(*key_lock);
  const Call call{options.policy, false, false};
  Decision decision;
  if (problem.K == 0) {
    // C = beta * C: every variant does this; there is nothing to tune.
    if (auto known = find(key)) return *known;
    decision = {&load_winner(device, default_variant()), false};
  } else {
    const Found found = lookup(device, problem, call, options);
    if (found.source == Source::memory) return *found.decision;
    decision = decide(device, found.result.winner);
    decision.fallback = found.source == Source::fallback;
    if (decision.fallback && options.policy == TunePolicy::background) {
      queue_background_tuning(device, problem, key, options);
      decision.queued = true;
    }
  }
  remember(key, decision);
  return decision;
}

AutotuneResult Dispatcher::autotune(const DeviceInfo& device, const Problem& problem,
                                    const Options& options) {
  const ShapeKey key = key_of(device.ordinal, problem);
  const auto key_lock = lock_for(key);
  std::lock_guard<std::mutex> guard(*key_lock);
  const Found found = lookup(device, problem, Call{options.policy, options.force, true}, options);
  remember(key, ready(device, problem, key, found, options));
  return found.result;
}

// The shape's lock is taken only to remember the winner, not while tuning: a caller of the shape
// is never held by the worker. A caller that tunes the shape itself meanwhile (tune_on_miss) finds
// the worker's lease, whose owner is not the process's own, and waits for its result as it
// would for another process's.
AutotuneResult Dispatcher::tune_in_background(const BackgroundJob& job) {
  const Found found = lookup(job.device, job.problem,
                             Call{TunePolicy::tune_on_miss, job.options.force, true}, job.options);
  const auto key_lock = lock_for(job.key);
  std::lock_guard<std::mutex> guard(*key_lock);
  remember(job.key, ready(job.device, job.problem, job.key, found, job.options));
  return found.result;
}

// The winner is made ready whatever the source: loaded here, and its CUBIN in the cache, so
// that later gemm() calls in this and other processes compile nothing. A row-split plan's
// parts are made ready the way gemm() would resolve them.
Decision Dispatcher::ready(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                           const Found& found, const Options& options) {
  Decision decision = decide(device, found.result.winner);
  // Like resolve(): a fallback is tried again when a later call may tune.
  decision.fallback = found.source == Source::fallback;
  if (decision.fallback && options.policy == TunePolicy::background) {
    queue_background_tuning(device, problem, key, options);
    decision.queued = true;
  }
  if (decision.split_rows > 0) {
    Options parts = options;
    parts.force = false;
    for (const std::int64_t rows : {decision.split_rows, problem.M - decision.split_rows}) {
      const Problem part = detail::rows_of(problem, rows);
      if (const auto known = find(key_of(device.ordinal, part));
          !known || resolves_again(*known, parts.policy))
        resolve(device, part, key_of(device.ordinal, part), parts);
    }
  }
  return decision;
}

Dispatcher::Found Dispatcher::lookup(const DeviceInfo& device, const Problem& problem,
                                     const Call& call, const Options& options) {
  for (const Source source : kResolutionOrder) {
    if (!may_answer(source, call)) continue;
    if (auto found = ask(source, device, problem, call, options)) return std::move(*found);
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
      const auto entry = fresh_entry(device, problem, call.wants_result);
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
    case Source::preloaded: {
      const auto entry = preloaded_entry(device, problem, call.wants_result);
      // Names were validated when the preloaded files were read.
      if (!entry || !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
      log(LogLevel::info, "shape " + describe(problem) + " served from the preloaded cache (" +
                              entry->device_key + "): " + entry->winner);
      found.result = to_result(*entry, problem, ResultSource::preloaded);
      return found;
    }
    case Source::tuning:
      found.result = tune_once(device, problem, options);
      return found;
    case Source::fallback:
      // Asked not to tune: report what gemm() runs, without timing it.
      found.result.device_key = device.model_key();
      found.result.problem = problem;
      found.result.problem_class = class_of(problem);
      found.result.winner = variant_name(fallback_variant(device, problem));
      found.result.source = ResultSource::fallback;
      return found;
  }
  return std::nullopt;
}

std::optional<cache::StoredEntry> Dispatcher::fresh_entry(const DeviceInfo& device,
                                                          const Problem& problem,
                                                          bool with_candidates) {
  return with_store(
      "cache lookup failed, treating as a miss", std::optional<cache::StoredEntry>{},
      [&](ResultStore& store) -> std::optional<cache::StoredEntry> {
        auto entry = store.find(device.model_key(), problem, class_of(problem), with_candidates);
        if (entry && !is_fresh(*entry, running_versions(device, problem.precision))) {
          log(LogLevel::info, "cached result for " + describe(problem) +
                                  " is stale (tuned under another driver, NVRTC or template set)");
          return std::nullopt;
        }
        return entry;
      });
}

// A fresh entry whose winner can serve `problem` here: what another process's tuning stored.
std::optional<cache::StoredEntry> Dispatcher::usable_entry(const DeviceInfo& device,
                                                           const Problem& problem) {
  auto entry = fresh_entry(device, problem, true);
  if (entry && !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
  return entry;
}

// The same lookup over the entries with or without their candidates: both hold the same entries
// (cache/preloaded.hpp), so the answer's winner does not depend on which is asked.
std::optional<cache::StoredEntry> Dispatcher::preloaded_entry(const DeviceInfo& device,
                                                              const Problem& problem,
                                                              bool with_candidates) {
  return cache::find_preloaded(with_candidates ? parts_.preloaded() : parts_.preloaded_headers(),
                               device.model_key(), device.arch(), problem.M, problem.N, problem.K,
                               class_of(problem), running_versions(device, problem.precision),
                               problem.precision);
}

// A part's winner known without tuning (cache, then preloaded), loaded so that the bench finds
// its kernel; nullopt when the part must be tuned.
std::optional<std::string> Dispatcher::known_winner(const DeviceInfo& device, const Problem& problem) {
  std::optional<std::string> winner = stored_winner(device, problem);
  if (winner) decide(device, *winner);
  return winner;
}

std::optional<std::string> Dispatcher::stored_winner(const DeviceInfo& device,
                                                     const Problem& problem) {
  std::optional<cache::StoredEntry> entry = fresh_entry(device, problem, false);
  if (!entry || !why_unusable(entry->winner, device, problem).empty())
    entry = preloaded_entry(device, problem, false);
  if (!entry || !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
  return entry->winner;
}

// What gemm() runs for a winner's name: its kernel, loaded, or a row-split plan, whose parts
// gemm() dispatches as shapes of their own.
Decision Dispatcher::decide(const DeviceInfo& device, const std::string& winner) {
  if (const auto rows = detail::parse_row_split(winner)) return {nullptr, false, *rows};
  if (detail::CandidateProvider* provider = detail::provider_of(winner))
    return {nullptr, false, 0, false, &provider->prepare(winner, device)};
  return {&load_winner(device, parse_variant(winner)), false};
}

// Loads `v` for `device`: already in memory, else its CUBIN from the cache, else NVRTC (and the
// CUBIN goes into the cache for the next process).
const LoadedKernel& Dispatcher::load_winner(const DeviceInfo& device, const Variant& v) {
  if (const auto* loaded = parts_.loader->find_loaded(device, v)) return *loaded;
  if (const auto image = stored_cubin(device, v)) {
    try {
      return parts_.loader->load(device, v, *image);
    } catch (const Error& e) {  // a damaged or swapped image: compiled and replaced below
      log(LogLevel::warn, unusable_cubin_warning(v) + ": " + e.what());
    }
  }
  const auto compiled = parts_.loader->compile(v, device.arch());
  save_cubin(device, compiled);
  return parts_.loader->load(device, v, compiled.cubin);
}

detail::CompiledVariant Dispatcher::candidate_binary(const DeviceInfo& device, const Variant& v) {
  if (auto image = stored_cubin(device, v)) {
    detail::CompiledVariant stored;  // compile_ms 0: nothing compiled
    stored.name = variant_name(v);
    stored.arch = device.arch();
    stored.template_hash = template_hash_of(v);
    stored.cubin = std::move(*image);
    return stored;
  }
  detail::CompiledVariant compiled = parts_.loader->compile(v, device.arch());
  save_cubin(device, compiled);
  return compiled;
}

std::optional<std::vector<char>> Dispatcher::stored_cubin(const DeviceInfo& device,
                                                          const Variant& v) {
  return with_store(unusable_cubin_warning(v), std::optional<std::vector<char>>{},
                    [&](ResultStore& store) -> std::optional<std::vector<char>> {
                      // A shared cache's CUBIN may be anyone's code (cache_trust.hpp).
                      if (!store.loads_stored_code()) return std::nullopt;
                      return store.find_cubin(device.arch(), device.nvrtc_version,
                                              template_hash_of(v), variant_name(v));
                    });
}

void Dispatcher::save_cubin(const DeviceInfo& device, const detail::CompiledVariant& compiled) {
  with_store("could not store a CUBIN", false, [&](ResultStore& store) {
    // A shared cache gets no CUBINs: no process loads them from it.
    if (store.loads_stored_code()) store.put_cubin(compiled, device.arch(), device.nvrtc_version);
    return true;
  });
}

// Tunes under a lease in the cache, so that of several processes missing the same key at the same
// time one tunes and the others wait for its result. A lease expires, so a process that died
// while tuning blocks the key for at most lease_seconds; a waiter gives up after max_wait_seconds
// and tunes itself.
AutotuneResult Dispatcher::tune_once(const DeviceInfo& device, const Problem& problem,
                                     const Options& options) {
  const LeaseTimes& times = parts_.lease;
  const std::string key = device.model_key() + "|" + describe(problem);
  const detail::TuneHooks* hooks = detail::current_tune_hooks();
  const std::string owner =
      hooks != nullptr && !hooks->lease_owner.empty() ? hooks->lease_owner : parts_.lease_owner;
  const auto start = std::chrono::steady_clock::now();
  bool announced = false;
  while (true) {
    const bool mine = with_store("cache lease unavailable, tuning without one", true,
                                 [&](ResultStore& store) {
                                   return store.try_acquire_lease(key, owner, times.lease_seconds);
                                 });
    if (mine) {
      struct Release {
        Dispatcher& d;
        const std::string& key;
        const std::string& owner;
        ~Release() {
          d.with_store("", false, [&](ResultStore& store) {  // else it expires on its own
            store.release_lease(key, owner);
            return true;
          });
        }
      } release{*this, key, owner};
      // The lease may be free because another process just finished tuning this key and stored
      // its result after our miss: serve that result rather than tune the key twice.
      if (!options.force) {
        if (auto entry = usable_entry(device, problem))
          return to_result(*entry, problem, source_of(entry->source));
      }
      return tune_and_store(device, problem, options);
    }
    if (!options.force) {
      if (auto entry = usable_entry(device, problem))
        return to_result(*entry, problem, source_of(entry->source));
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > times.max_wait_seconds) {
      log(LogLevel::warn, "waited " + std::to_string(waited) + " s for another process tuning " +
                              describe(problem) + "; tuning here");
      return tune_and_store(device, problem, options);
    }
    if (!announced) {
      log(LogLevel::info, "another process is tuning " + describe(problem) + "; waiting for its result");
      announced = true;
    }
    detail::stop_if_requested(hooks);
    std::this_thread::sleep_for(times.poll);
  }
}

AutotuneResult Dispatcher::tune_and_store(const DeviceInfo& device, const Problem& problem,
                                          const Options& options) {
  log(LogLevel::info, "tuning " + describe(problem) + " on " + device.name);
  TuneRequest request;
  request.progress = options.progress;
  request.hooks = detail::current_tune_hooks();
  request.compile = [this, &device, hooks = request.hooks](const Variant& v, const std::string&) {
    detail::stop_if_requested(hooks);
    return candidate_binary(device, v);
  };
  request.budget_ms = options.tune_budget_ms;
  if (request.budget_ms > 0) request.history = history_for(device, problem);
  // A plan's part with a result already (unless forced to measure anew) is not tuned again.
  if (!options.force)
    for (const std::int64_t rows : detail::row_split_heights(problem))
      for (const std::int64_t part : {rows, problem.M - rows})
        if (auto winner = known_winner(device, detail::rows_of(problem, part)))
          request.known_part_winners[part] = *winner;
  // Below highest, the FP32 results known for the shape and its parts are candidates too, timed
  // on the same bench (even when forced: only their names are taken), so that asking for less
  // precision does not end slower than highest (docs/tuning.md, "Precision modes").
  if (problem.precision != Precision::highest) {
    Problem fp32 = problem;
    fp32.precision = Precision::highest;
    if (auto winner = stored_winner(device, fp32)) {
      request.highest_winner = *winner;
      log(LogLevel::info, "the highest result of " + describe(problem) + ", " + *winner +
                              ", is timed among its candidates");
    }
    for (const std::int64_t rows : detail::row_split_heights(problem))
      for (const std::int64_t part : {rows, problem.M - rows})
        if (auto winner = stored_winner(device, detail::rows_of(fp32, part)))
          request.highest_part_winners[part] = *winner;
  }
  const tuner::ShapeTuning tuning = parts_.tuner->tune(device, problem, request);
  tuning_count.fetch_add(1 + tuning.parts.size(), std::memory_order_relaxed);
  // A tuning told to stop may have finished with candidates cut short: store none of it.
  detail::stop_if_requested(request.hooks);

  const std::string tuned_at = detail::utc_now_text("%Y-%m-%dT%H:%M:%SZ");
  std::vector<cache::StoredEntry> entries;
  for (const auto& part : tuning.parts)
    entries.push_back(entry_of(device, part.problem, part.outcome, tuned_at));
  entries.push_back(entry_of(device, problem, tuning.outcome, tuned_at));
  with_store("could not store the tuning result", false, [&](ResultStore& store) {
    store.put_all(entries);
    return true;
  });
  for (const auto& part : tuning.parts) {
    // A part is never a plan; a provider's winner has no CUBIN.
    if (!detail::provider_of(part.outcome.winner)) save_cubin(device, part.outcome.winner_binary);
    log(LogLevel::info, "tuned " + describe(part.problem) + " in " +
                            std::to_string(part.outcome.seconds) + " s: " + part.outcome.winner);
  }
  if (!detail::parse_row_split(tuning.outcome.winner) && !detail::provider_of(tuning.outcome.winner))
    save_cubin(device, tuning.outcome.winner_binary);
  log(LogLevel::info, "tuned " + describe(problem) + " in " + std::to_string(tuning.outcome.seconds) +
                          " s: " + tuning.outcome.winner);
  AutotuneResult r = to_result(entries.back(), problem, ResultSource::tuned);
  r.tuning_seconds = tuning.outcome.seconds;
  return r;
}

std::vector<tuner::MeasuredShape> Dispatcher::history_for(const DeviceInfo& device,
                                                         const Problem& problem) {
  const auto listed = with_store("cache listing failed", std::vector<cache::StoredEntry>{},
                                 [&](ResultStore& store) { return store.list(device.model_key()); });
  return measured_shapes(listed, parts_.preloaded(), device, class_of(problem),
                         running_versions(device, problem.precision), problem.precision);
}

// Policy off: the winner of the nearest tuned shape (log-distance over M, N, K) of this device,
// class and precision that can run this problem, else the precision's default variant, else
// (a precision whose kernels this device lacks) the default variant, else naive.
Variant Dispatcher::fallback_variant(const DeviceInfo& device, const Problem& problem) {
  std::optional<Variant> best;
  std::string best_source;
  double best_distance = std::numeric_limits<double>::infinity();
  const std::string wanted_class = class_of(problem);
  const cache::BuildVersions running = running_versions(device, problem.precision);
  // Entries of another class, stale ones, row-split plans, providers' candidates (chosen for
  // their own shape) and variants of a newer build (not one kernel this build can run) and
  // winners that cannot run this problem do not count.
  const auto consider = [&](const cache::StoredEntry& e, const char* source) {
    if (e.problem_class != wanted_class || e.precision != problem.precision) return;
    const double d = std::fabs(std::log(double(e.M) / double(problem.M))) +
                     std::fabs(std::log(double(e.N) / double(problem.N))) +
                     std::fabs(std::log(double(e.K) / double(problem.K)));
    if (d >= best_distance || detail::parse_row_split(e.winner) || detail::provider_of(e.winner) ||
        !why_unusable(e.winner, device, problem).empty())
      return;
    best = parse_variant(e.winner);
    best_source = source;
    best_distance = d;
  };
  const auto listed = with_store("cache listing failed", std::vector<cache::StoredEntry>{},
                                 [&](ResultStore& store) { return store.list(device.model_key()); });
  for (const auto& e : listed)
    if (is_fresh(e, running)) consider(e, "cache");
  // The shipped results of this device model or architecture count as tuned shapes too: with
  // tuning off and an empty cache, an H200 still runs a tuned kernel, not the default.
  for (const auto& e : parts_.preloaded_headers())
    if (cache::preloaded_applies(e, device.model_key(), device.arch(), running))
      consider(e, "preloaded cache");
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
