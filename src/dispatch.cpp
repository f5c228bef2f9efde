// gemm() and autotune(): memory first, then the SQLite cache, then tuning (or a fallback).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "cuda_check.hpp"
#include "gpu_bench.hpp"
#include "kernel_library.hpp"
#include "kernel_sources.hpp"
#include "launch.hpp"
#include "lease_owner.hpp"
#include "log.hpp"
#include "nvrtc_compiler.hpp"
#include "preloaded.hpp"
#include "row_split.hpp"
#include "store_open.hpp"
#include "stream_check.hpp"
#include "tflops.hpp"
#include "utc_time.hpp"
#include "tune_hooks.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/error.hpp"
#include "tuner.hpp"
#include "tuning_store.hpp"

namespace tilemm {

using detail::LoadedKernel;
using detail::log;
using detail::LogLevel;

namespace {

std::atomic<std::uint64_t> tuning_count{0};

// Minimal leading dimensions: part of the problem class, so of the cache key.
bool dense_leading_dimensions(std::int64_t K, std::int64_t N, std::int64_t lda, std::int64_t ldb,
                              std::int64_t ldc) {
  return lda == std::max<std::int64_t>(1, K) && ldb == std::max<std::int64_t>(1, N) &&
         ldc == std::max<std::int64_t>(1, N);
}
bool dense_leading_dimensions(const Problem& p) {
  return dense_leading_dimensions(p.K, p.N, p.lda, p.ldb, p.ldc);
}

// What a dispatch decision depends on; built without allocating, on every call.
struct ShapeKey {
  int device;
  std::int64_t M, N, K;
  int alignment;
  bool dense;
  bool operator==(const ShapeKey& o) const {
    return device == o.device && M == o.M && N == o.N && K == o.K && alignment == o.alignment &&
           dense == o.dense;
  }
  bool operator<(const ShapeKey& o) const {
    return std::tie(device, M, N, K, alignment, dense) <
           std::tie(o.device, o.M, o.N, o.K, o.alignment, o.dense);
  }
};

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.device);
    for (std::int64_t v : {k.M, k.N, k.K, std::int64_t{k.alignment}, std::int64_t{k.dense}})
      h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

struct Decision {
  const LoadedKernel* kernel = nullptr;  // null for a row-split plan
  bool fallback = false;  // chosen without a tuning result for this shape (policy off)
  // > 0: a row-split plan (row_split.hpp): rows [0, split_rows) and the rest are dispatched as
  // shapes of their own, each to its own winner.
  std::int64_t split_rows = 0;
};

cache::BuildVersions running_versions(const DeviceInfo& device) {
  return {detail::templates_hash(), device.nvrtc_version, device.driver_version};
}

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

class Dispatcher {
 public:
  static Dispatcher& instance() {
    static auto* d = new Dispatcher();  // never destroyed: used until the very end of the process
    return *d;
  }

  std::optional<Decision> find(const ShapeKey& key) {
    std::shared_lock<std::shared_mutex> lock(memo_mutex_);
    const auto it = memo_.find(key);
    if (it == memo_.end()) return std::nullopt;
    return it->second;
  }

  Decision resolve(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                   const Options& options) {
    const auto key_lock = lock_for(key);
    std::lock_guard<std::mutex> guard(*key_lock);
    // Another thread may have resolved this shape while we waited for its lock.
    if (auto d = find(key); d && !(d->fallback && options.policy == TunePolicy::tune_on_miss))
      return *d;

    Decision decision;
    if (problem.K == 0) {
      // C = beta * C: every variant does this; there is nothing to tune.
      decision = {&load_winner(device, default_variant()), false};
    } else if (auto winner = cached_winner(device, problem)) {
      decision = decide(device, *winner);
    } else if (auto preloaded = preloaded_winner(device, problem)) {
      decision = decide(device, *preloaded);
    } else if (options.policy == TunePolicy::tune_on_miss) {
      const AutotuneResult result = tune_once(device, problem, options);
      decision = decide(device, result.winner);
    } else {
      decision = {&load_winner(device, fallback_variant(device, problem)), true};
    }
    std::unique_lock<std::shared_mutex> lock(memo_mutex_);
    memo_[key] = decision;
    return decision;
  }

  AutotuneResult autotune(const DeviceInfo& device, const Problem& problem,
                          const Options& options) {
    const ShapeKey key{device.ordinal, problem.M, problem.N, problem.K, problem.alignment,
                       dense_leading_dimensions(problem)};
    const auto key_lock = lock_for(key);
    std::lock_guard<std::mutex> guard(*key_lock);
    AutotuneResult result;
    std::optional<cache::StoredEntry> known;
    if (!options.force && (known = fresh_entry(device, problem, true)) && usable(*known, device, problem))
      result = to_result(*known, problem, source_of(known->source));
    else if (!options.force && (known = preloaded_entry(device, problem)) && usable(*known, device, problem))
      result = to_result(*known, problem, ResultSource::preloaded);
    else if (options.policy == TunePolicy::off) {
      // Asked not to tune: report what gemm() would run, without timing it.
      result.device_key = device.model_key();
      result.problem = problem;
      result.problem_class = problem_class(problem);
      result.winner = variant_name(fallback_variant(device, problem));
      result.source = ResultSource::fallback;
    } else
      result = tune_once(device, problem, options);
    // The winner is made ready whatever the source: loaded here, and its CUBIN in the cache, so
    // that later gemm() calls in this and other processes compile nothing. A row-split plan's
    // parts are made ready the same way (from the cache: tuning the plan tuned them).
    Decision decision = decide(device, result.winner);
    // Like resolve(): a fallback is tried again when a later call may tune.
    decision.fallback = result.source == ResultSource::fallback;
    if (decision.split_rows > 0) {
      Options parts = options;
      parts.force = false;
      autotune(device, detail::rows_of(problem, decision.split_rows), parts);
      autotune(device, detail::rows_of(problem, problem.M - decision.split_rows), parts);
    }
    std::unique_lock<std::shared_mutex> lock(memo_mutex_);
    memo_[key] = decision;
    return result;
  }

 private:
  std::shared_ptr<std::mutex> lock_for(const ShapeKey& key) {
    std::lock_guard<std::mutex> lock(locks_mutex_);
    auto& m = key_locks_[key];
    if (!m) m = std::make_shared<std::mutex>();
    return m;
  }

  static std::string describe(const Problem& p) {
    return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) + " (" +
           problem_class(p) + ")";
  }

  // The store, opened on first use. A cache that cannot be used is never fatal: open_store
  // moves a damaged file aside or falls back to memory, and says so once.
  cache::TuningStore& store() {
    if (store_) return *store_;
    cache::OpenedStore opened = cache::open_store(cache_path());
    if (!opened.warning.empty()) log(LogLevel::warn, opened.warning);
    loads_stored_code_ = opened.code_trust.loads_stored_code;
    if (!loads_stored_code_)
      log(LogLevel::warn, "the cache '" + cache_path() + "' is shared (" + opened.code_trust.reason +
                              "): its tuning results are used, but its stored kernels are not "
                              "loaded; each is compiled in this process instead");
    store_ = std::move(opened.store);
    return *store_;
  }

  std::optional<cache::StoredEntry> fresh_entry(const DeviceInfo& device, const Problem& problem,
                                                bool with_candidates = false) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    try {
      auto entry = store().find(device.model_key(), problem.M, problem.N, problem.K,
                                problem_class(problem), with_candidates);
      if (entry && cache::is_stale(*entry, running_versions(device))) {
        log(LogLevel::info, "cached result for " + describe(problem) +
                                " is stale (tuned under another driver, NVRTC or template set)");
        return std::nullopt;
      }
      return entry;
    } catch (const Error& e) {
      log(LogLevel::warn, std::string("cache lookup failed, treating as a miss: ") + e.what());
      return std::nullopt;
    }
  }

  // Why a winner's name cannot serve `problem` here, empty when it can: a row-split plan must
  // split the rows in two, a variant must be one this build knows and can_run() must pass.
  static std::string why_unusable(const std::string& winner, const DeviceInfo& device,
                                  const Problem& problem) {
    if (const auto rows = detail::parse_row_split(winner))
      return detail::row_split_fits(*rows, problem) ? "" : "it does not split the rows in two";
    try {
      if (const Verdict verdict = can_run(parse_variant(winner), device, problem); !verdict)
        return "it cannot run here: " + verdict.reason;
    } catch (const InvalidArgument& e) {
      return std::string("it is unknown to this build: ") + e.what();
    }
    return "";
  }

  static bool usable(const cache::StoredEntry& e, const DeviceInfo& device, const Problem& problem) {
    return why_unusable(e.winner, device, problem).empty();
  }

  // The winner of a fresh cache entry, if it names a variant this build knows and that can run
  // the problem (an imported entry may name either); otherwise the shape counts as a miss.
  std::optional<std::string> cached_winner(const DeviceInfo& device, const Problem& problem) {
    const auto entry = fresh_entry(device, problem);
    if (!entry) return std::nullopt;
    if (const std::string unusable = why_unusable(entry->winner, device, problem); !unusable.empty()) {
      log(LogLevel::warn, "cached winner " + entry->winner + " for " + describe(problem) +
                              " is ignored: " + unusable);
      return std::nullopt;
    }
    log(LogLevel::info, "shape " + describe(problem) + " served from the cache (" + entry->source +
                            "): " + entry->winner);
    return entry->winner;
  }

  static std::optional<cache::StoredEntry> preloaded_entry(const DeviceInfo& device,
                                                          const Problem& problem) {
    return cache::find_preloaded(cache::preloaded_entries(), device.model_key(), device.arch(),
                                 problem.M, problem.N, problem.K, problem_class(problem),
                                 detail::templates_hash());
  }

  // The winner of a preloaded entry for this device (or architecture), if it can run here.
  std::optional<std::string> preloaded_winner(const DeviceInfo& device, const Problem& problem) {
    const auto entry = preloaded_entry(device, problem);
    if (!entry || !usable(*entry, device, problem)) return std::nullopt;  // names validated when read
    log(LogLevel::info, "shape " + describe(problem) + " served from the preloaded cache (" +
                            entry->device_key + "): " + entry->winner);
    return entry->winner;
  }

  // What gemm() runs for a winner's name: its kernel, loaded, or a row-split plan, whose parts
  // gemm() dispatches as shapes of their own.
  Decision decide(const DeviceInfo& device, const std::string& winner) {
    if (const auto rows = detail::parse_row_split(winner)) return {nullptr, false, *rows};
    return {&load_winner(device, parse_variant(winner)), false};
  }

  // Loads `v` for `device`: already in memory, else its CUBIN from the cache, else NVRTC (and
  // the CUBIN goes into the cache for the next process).
  const LoadedKernel& load_winner(const DeviceInfo& device, const Variant& v) {
    if (const auto* loaded = detail::find_loaded(device, v)) return *loaded;
    const std::string name = variant_name(v);
    const std::string hash(detail::find_template(detail::find_family(v.family).template_file).sha256);
    {
      std::lock_guard<std::mutex> lock(store_mutex_);
      try {
        // A shared cache's CUBIN may be anyone's code (cache_trust.hpp): compile it instead.
        cache::TuningStore& s = store();
        if (auto image = loads_stored_code_ ? s.find_cubin(device.arch(), device.nvrtc_version, hash, name)
                                            : std::nullopt)
          return detail::load_kernel(device, v, *image);
      } catch (const Error& e) {
        log(LogLevel::warn, "cached CUBIN of " + name + " unusable, recompiling: " + e.what());
      }
    }
    const auto compiled = detail::compile_variant(v, device.arch());
    save_cubin(device, compiled);
    return detail::load_kernel(device, v, compiled.cubin);
  }

  void save_cubin(const DeviceInfo& device, const detail::CompiledVariant& compiled) {
    std::lock_guard<std::mutex> lock(store_mutex_);
    try {
      // A shared cache gets no CUBINs: no process loads them from it.
      if (cache::TuningStore& s = store(); loads_stored_code_)
        s.put_cubin(device.arch(), device.nvrtc_version, compiled.template_hash, compiled.name,
                    compiled.cubin);
    } catch (const Error& e) {
      log(LogLevel::warn, std::string("could not store a CUBIN: ") + e.what());
    }
  }

  // Tunes under a lease in the cache, so that of several processes missing the same key at the
  // same time one tunes and the others wait for its result. A lease expires, so a process that
  // died while tuning blocks the key for at most kLeaseSeconds; a waiter gives up after
  // kMaxWaitSeconds and tunes itself.
  AutotuneResult tune_once(const DeviceInfo& device, const Problem& problem,
                           const Options& options) {
    constexpr double kLeaseSeconds = 300.0;
    constexpr double kMaxWaitSeconds = 2 * kLeaseSeconds;
    const std::string key = device.model_key() + "|" + describe(problem);
    static const std::string process_owner = cache::process_lease_owner();
    const detail::TuneHooks* hooks = detail::current_tune_hooks();
    const std::string owner =
        hooks != nullptr && !hooks->lease_owner.empty() ? hooks->lease_owner : process_owner;
    const auto start = std::chrono::steady_clock::now();
    bool announced = false;
    while (true) {
      bool mine = true;
      {
        std::lock_guard<std::mutex> lock(store_mutex_);
        try {
          mine = store().try_acquire_lease(key, owner, kLeaseSeconds);
        } catch (const Error& e) {
          log(LogLevel::warn, std::string("cache lease unavailable, tuning without one: ") + e.what());
        }
      }
      if (mine) {
        struct Release {
          Dispatcher& d;
          const std::string& key;
          const std::string& owner;
          ~Release() {
            std::lock_guard<std::mutex> lock(d.store_mutex_);
            try {
              d.store().release_lease(key, owner);
            } catch (const Error&) {  // it expires on its own
            }
          }
        } release{*this, key, owner};
        // The lease may be free because another process just finished tuning this key and
        // stored its result after our miss: serve that result rather than tune the key twice.
        if (!options.force) {
          if (auto entry = fresh_entry(device, problem, true))
            return to_result(*entry, problem, source_of(entry->source));
        }
        return tune_and_store(device, problem, options);
      }
      if (!options.force) {
        if (auto entry = fresh_entry(device, problem, true))
          return to_result(*entry, problem, source_of(entry->source));
      }
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > kMaxWaitSeconds) {
        log(LogLevel::warn, "waited " + std::to_string(waited) + " s for another process tuning " +
                                describe(problem) + "; tuning here");
        return tune_and_store(device, problem, options);
      }
      if (!announced) {
        log(LogLevel::info, "another process is tuning " + describe(problem) + "; waiting for its result");
        announced = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  AutotuneResult tune_and_store(const DeviceInfo& device, const Problem& problem,
                                const Options& options) {
    log(LogLevel::info, "tuning " + describe(problem) + " on " + device.name);
    tuning_count.fetch_add(1, std::memory_order_relaxed);
    tuner::GpuBench bench(device, problem);
    tuner::TuneSettings settings;
    settings.progress = options.progress;
    if (const detail::TuneHooks* hooks = detail::current_tune_hooks()) {
      settings.skip = hooks->skip;
      settings.on_candidate = hooks->on_candidate;
      settings.on_launch_failure = hooks->on_launch_failure;
    }
    tuner::TuneOutcome outcome = tuner::tune(device, problem, bench, settings);
    const auto plans_start = std::chrono::steady_clock::now();
    add_row_split_candidates(device, problem, options, settings, bench, outcome);
    outcome.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - plans_start).count();

    cache::StoredEntry e;
    e.device_key = device.model_key();
    e.M = problem.M;
    e.N = problem.N;
    e.K = problem.K;
    e.problem_class = problem_class(problem);
    e.winner = outcome.winner;
    e.median_ms = outcome.median_ms;
    e.tflops = detail::tflops(problem, outcome.median_ms);
    e.margin = outcome.margin;
    e.tuned_at = detail::utc_now_text("%Y-%m-%dT%H:%M:%SZ");
    e.tilemm_version = TILEMM_VERSION;
    e.versions = running_versions(device);
    e.arch = device.arch();
    e.source = "tuned";
    e.candidates = outcome.candidates;
    {
      std::lock_guard<std::mutex> lock(store_mutex_);
      try {
        store().put(e);
      } catch (const Error& err) {
        log(LogLevel::warn, std::string("could not store the tuning result: ") + err.what());
      }
    }
    if (!detail::parse_row_split(outcome.winner)) save_cubin(device, outcome.winner_binary);
    log(LogLevel::info, "tuned " + describe(problem) + " in " +
                            std::to_string(outcome.seconds) + " s: " + outcome.winner);
    AutotuneResult r = to_result(e, problem, ResultSource::tuned);
    r.tuning_seconds = outcome.seconds;
    return r;
  }

  // One more candidate per core height worth trying (row_split.hpp): each part is tuned as a
  // shape of its own (and stored, so that gemm() finds it), then the plan, both parts' winners
  // back to back on the bench's inputs, is verified and timed like any variant.
  void add_row_split_candidates(const DeviceInfo& device, const Problem& problem,
                                const Options& options, const tuner::TuneSettings& settings,
                                tuner::GpuBench& bench, tuner::TuneOutcome& outcome) {
    const auto heights = detail::row_split_heights(problem);
    if (heights.empty()) return;
    double best = outcome.median_ms;
    for (const std::int64_t rows : heights) {
      CandidateResult c;
      c.variant = detail::row_split_name(rows);
      if (tuner::record_skip(c, settings)) {
        outcome.candidates.push_back(std::move(c));
        continue;
      }
      try {
        const AutotuneResult core = autotune(device, detail::rows_of(problem, rows), options);
        const AutotuneResult rest = autotune(device, detail::rows_of(problem, problem.M - rows), options);
        const std::string parts = "rows 0-" + std::to_string(rows - 1) + ": " + core.winner +
                                  "; rows " + std::to_string(rows) + "-" +
                                  std::to_string(problem.M - 1) + ": " + rest.winner;
        if (detail::parse_row_split(core.winner) || detail::parse_row_split(rest.winner)) {
          c.status = CandidateStatus::cannot_run;
          c.reason = "a part's winner is itself a row-split plan (" + parts + ")";
          outcome.candidates.push_back(std::move(c));
          continue;
        }
        const LoadedKernel& core_kernel = load_winner(device, parse_variant(core.winner));
        const LoadedKernel& rest_kernel = load_winner(device, parse_variant(rest.winner));
        const auto launch = [&](const GemmArgs& args, cudaStream_t stream) {
          detail::launch(core_kernel, detail::rows_of(args, 0, rows), stream);
          detail::launch(rest_kernel, detail::rows_of(args, rows, args.M - rows), stream);
        };
        tuner::measure_candidate(
            c, settings, best, [&] { return bench.verify_launch(launch); },
            [&](double give_up_ms) { return bench.time_launch(launch, give_up_ms); });
        // The parts' winners: the whole reason when it is ok, appended to any other.
        c.reason = c.reason.empty() ? parts : c.reason + " (" + parts + ")";
      } catch (const std::exception& e) {  // tuning or loading a part failed
        tuner::record_launch_error(c, settings, e.what());
      }
      outcome.candidates.push_back(std::move(c));
    }
    outcome.margin = tuner::rank_candidates(outcome.candidates);
    outcome.winner = outcome.candidates.front().variant;
    outcome.median_ms = outcome.candidates.front().stats.median_ms;
  }

  // Policy off: the winner of the nearest tuned shape (log-distance over M, N, K) of this
  // device and class that can run this problem, else the default variant, else naive.
  Variant fallback_variant(const DeviceInfo& device, const Problem& problem) {
    std::optional<Variant> best;
    std::string best_source;
    double best_distance = std::numeric_limits<double>::infinity();
    const std::string wanted_class = problem_class(problem);
    // Entries of another class, stale ones, row-split plans and variants of a newer build (not one
    // kernel this build can run) and winners that cannot run this problem do not count.
    const auto consider = [&](const cache::StoredEntry& e, const char* source) {
      if (e.problem_class != wanted_class) return;
      const double d = std::fabs(std::log(double(e.M) / double(problem.M))) +
                       std::fabs(std::log(double(e.N) / double(problem.N))) +
                       std::fabs(std::log(double(e.K) / double(problem.K)));
      if (d >= best_distance || detail::parse_row_split(e.winner) || !usable(e, device, problem))
        return;
      best = parse_variant(e.winner);
      best_source = source;
      best_distance = d;
    };
    {
      std::lock_guard<std::mutex> lock(store_mutex_);
      try {
        for (const auto& e : store().list(device.model_key()))
          if (!cache::is_stale(e, running_versions(device))) consider(e, "cache");
      } catch (const Error& e) {
        log(LogLevel::warn, std::string("cache listing failed: ") + e.what());
      }
    }
    // The shipped results of this device model or architecture count as tuned shapes too: with
    // tuning off and an empty cache, an H200 still runs a tuned kernel, not the default.
    for (const auto& e : cache::preloaded_entries())
      if (cache::preloaded_applies(e, device.model_key(), device.arch(), detail::templates_hash()))
        consider(e, "preloaded cache");
    if (best) {
      log(LogLevel::info, "tuning is off: " + describe(problem) + " uses the nearest tuned shape's " +
                              variant_name(*best) + " (" + best_source + ")");
      return *best;
    }
    const Variant fallback = can_run(default_variant(), device, problem) ? default_variant()
                                                                          : parse_variant("naive");
    log(LogLevel::info, "tuning is off and nothing is tuned near " + describe(problem) +
                            ": default variant " + variant_name(fallback));
    return fallback;
  }

  std::shared_mutex memo_mutex_;
  std::unordered_map<ShapeKey, Decision, ShapeKeyHash> memo_;
  std::mutex locks_mutex_;
  std::map<ShapeKey, std::shared_ptr<std::mutex>> key_locks_;
  std::mutex store_mutex_;
  std::unique_ptr<cache::TuningStore> store_;
  bool loads_stored_code_ = true;  // the opened store's code_trust (cache_trust.hpp)
};

void check_tunable(const Problem& p) {
  if (p.M < 1 || p.N < 1 || p.K < 1)
    throw InvalidArgument(p.M < 1 ? "M" : p.N < 1 ? "N" : "K",
                          "autotune needs M, N, K >= 1, got " + std::to_string(p.M) + "x" +
                              std::to_string(p.N) + "x" + std::to_string(p.K));
  GemmArgs shape;  // reuse gemm's checks of sizes and leading dimensions (pointers are not used)
  static float dummy[4];
  shape.M = p.M;
  shape.N = p.N;
  shape.K = p.K;
  shape.A = shape.B = dummy;
  shape.C = dummy;
  shape.lda = p.lda;
  shape.ldb = p.ldb;
  shape.ldc = p.ldc;
  validate(shape);
  if (p.alignment != 1 && p.alignment != 2 && p.alignment != 4)
    throw InvalidArgument("alignment", "must be 1, 2 or 4 floats, got " + std::to_string(p.alignment));
}

}  // namespace

namespace detail {
namespace {
thread_local const TuneHooks* installed_hooks = nullptr;
}
const TuneHooks* current_tune_hooks() { return installed_hooks; }
ScopedTuneHooks::ScopedTuneHooks(const TuneHooks& hooks) : previous_(installed_hooks) {
  installed_hooks = &hooks;
}
ScopedTuneHooks::~ScopedTuneHooks() { installed_hooks = previous_; }
}  // namespace detail

TunePolicy Options::policy_from_environment() {
  // Read once: every gemm() call without Options default-constructs one.
  static const TunePolicy policy = [] {
    const char* value = std::getenv("TILEMM_TUNE");
    return (value != nullptr && std::string(value) == "off") ? TunePolicy::off
                                                             : TunePolicy::tune_on_miss;
  }();
  return policy;
}

std::string problem_class(const Problem& p) {
  return "a" + std::to_string(p.alignment) + (dense_leading_dimensions(p) ? "-dense" : "-strided");
}

std::string cache_path() {
  if (const char* explicit_path = std::getenv("TILEMM_CACHE"); explicit_path && *explicit_path)
    return explicit_path;
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = std::string(home) + "/.cache";
  else
    base = ".cache";
  return base + "/tilemm/tuning.db";
}

std::uint64_t nvrtc_compilations() { return detail::nvrtc_compile_count(); }
std::uint64_t tunings_run() { return tuning_count.load(std::memory_order_relaxed); }

AutotuneResult autotune(const Problem& problem, const Options& options) {
  check_tunable(problem);
  return Dispatcher::instance().autotune(current_device(), problem, options);
}

AutotuneResult autotune(std::int64_t M, std::int64_t N, std::int64_t K, const Options& options) {
  return autotune(Problem::dense(M, N, K, 4), options);
}

void gemm(const GemmArgs& args, cudaStream_t stream, const Options& options) {
  validate(args);
  if (args.M == 0 || args.N == 0) return;
  // Kernels put tiles of rows on grid y (at most 65535 blocks). Taller problems run as slabs of
  // rows, each an independent GEMM on its rows of A and C; every family's tile is >= 16 rows
  // except tiled_t8, which can_run then rejects for a full slab.
  constexpr std::int64_t kRowSlab = std::int64_t{65535} * 16;
  if (args.M > kRowSlab) {
    for (std::int64_t r0 = 0; r0 < args.M; r0 += kRowSlab)
      gemm(detail::rows_of(args, r0, std::min(kRowSlab, args.M - r0)), stream, options);
    return;
  }
  const DeviceInfo& device = current_device();
  detail::check_stream(stream, device);
  const int alignment = alignment_class(args.A, args.B, args.C, args.lda, args.ldb, args.ldc);
  const bool dense = dense_leading_dimensions(args.K, args.N, args.lda, args.ldb, args.ldc);
  const ShapeKey key{device.ordinal, args.M, args.N, args.K, alignment, dense};
  Dispatcher& dispatcher = Dispatcher::instance();
  auto decision = dispatcher.find(key);
  if (!decision || (decision->fallback && options.policy == TunePolicy::tune_on_miss))
    decision = dispatcher.resolve(device, args.problem(), key, options);
  if (const std::int64_t rows = decision->split_rows; rows > 0) {
    gemm(detail::rows_of(args, 0, rows), stream, options);
    gemm(detail::rows_of(args, rows, args.M - rows), stream, options);
    return;
  }
  detail::launch(*decision->kernel, args, stream);
}

void gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
          std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc, cudaStream_t stream, const Options& options) {
  GemmArgs args;
  args.M = M;
  args.N = N;
  args.K = K;
  args.alpha = alpha;
  args.A = A;
  args.lda = lda;
  args.B = B;
  args.ldb = ldb;
  args.beta = beta;
  args.C = C;
  args.ldc = ldc;
  gemm(args, stream, options);
}

}  // namespace tilemm
