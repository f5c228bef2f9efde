// The dispatcher: per process, what runs each shape (the memo, behind per-shape locks), found by
// walking the resolution order (resolution.hpp) over the SQLite cache, the preloaded results, a
// tuning under the cross-process lease, or the fallback. The store, the tuner and the kernel
// loader are interfaces, so that the logic is tested on the CPU with fakes
// (tests/test_dispatcher.cpp); api/ wires the real ones (real_collaborators.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "background_tuning.hpp"
#include "candidate_provider.hpp"
#include "kernel_library.hpp"
#include "nvrtc_compiler.hpp"
#include "resolution.hpp"
#include "row_split_candidates.hpp"
#include "shape_key.hpp"
#include "tilemm/autotune.hpp"
#include "tune_hooks.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

struct Decision {
  const detail::LoadedKernel* kernel = nullptr;  // null for a row-split plan
  bool fallback = false;  // chosen without a tuning result for this shape (policy off)
  // > 0: a row-split plan (row_split.hpp): rows [0, split_rows) and the rest are dispatched as
  // shapes of their own, each to its own winner.
  std::int64_t split_rows = 0;
  // A fallback whose background tuning was queued (TunePolicy::background): the worker replaces
  // this decision with the winner once it is stored.
  bool queued = false;
  // A provider's candidate (candidate_provider.hpp), prepared once: gemm() enqueues it instead of
  // a kernel (then `kernel` is null).
  const detail::PreparedCandidate* prepared = nullptr;
};

// Whether a remembered decision must be resolved again by a call under `policy`: a fallback,
// when the call may tune now (tune_on_miss) or queue a tuning not queued yet (background).
bool resolves_again(const Decision& decision, TunePolicy policy);

// The SQLite cache as the dispatcher uses it. Any call may throw tilemm::Error; the dispatcher
// turns each failure into one warning and goes on as if the cache had no answer.
class ResultStore {
 public:
  virtual ~ResultStore() = default;
  virtual std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                                 const std::string& problem_class,
                                                 bool with_candidates) = 0;
  virtual std::vector<cache::StoredEntry> list(const std::string& device_key) = 0;
  // All or nothing.
  virtual void put_all(const std::vector<cache::StoredEntry>& entries) = 0;
  // Whether this store's CUBINs may be loaded (cache_trust.hpp); false: they are neither loaded
  // nor written.
  virtual bool loads_stored_code() = 0;
  virtual std::optional<std::vector<char>> find_cubin(const std::string& arch, int nvrtc_version,
                                                      const std::string& template_hash,
                                                      const std::string& variant) = 0;
  virtual void put_cubin(const detail::CompiledVariant& compiled, const std::string& arch,
                         int nvrtc_version) = 0;
  virtual bool try_acquire_lease(const std::string& key, const std::string& owner,
                                 double ttl_seconds) = 0;
  virtual void release_lease(const std::string& key, const std::string& owner) = 0;
};

// Kernels of this process (kernel_library.hpp) and NVRTC.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  virtual const detail::LoadedKernel* find_loaded(const DeviceInfo& device, const Variant& v) = 0;
  // Throws tilemm::Error when the image is rejected.
  virtual const detail::LoadedKernel& load(const DeviceInfo& device, const Variant& v,
                                           const std::vector<char>& cubin) = 0;
  virtual detail::CompiledVariant compile(const Variant& v, const std::string& arch) = 0;
};

// A tuning of one shape with its row-split plans (tuner/row_split_candidates.hpp).
struct TuneRequest {
  std::function<void(int done, int total)> progress;
  // How the tuning gets each candidate's CUBIN: the dispatcher's looks in the store first and
  // stores what it compiles, so that a machine compiles each variant once, whatever the shape.
  tuner::Compiler compile;
  const detail::TuneHooks* hooks = nullptr;  // may be null
  std::map<std::int64_t, std::string> known_part_winners;  // PlanSettings::known_winners
  // Below highest, the winners of the shape's and its plan parts' fresh highest results
  // (TuneSettings::highest_winner, PlanSettings::highest_part_winners); empty where none.
  std::string highest_winner;
  std::map<std::int64_t, std::string> highest_part_winners;
  // Options::tune_budget_ms (0: the exhaustive search) and, under a budget, what the candidates
  // are ranked by (tuning_history.hpp).
  double budget_ms = 0.0;
  std::vector<tuner::MeasuredShape> history;
};
class ShapeTuner {
 public:
  virtual ~ShapeTuner() = default;
  // Throws tilemm::Error when no candidate is correct.
  virtual tuner::ShapeTuning tune(const DeviceInfo& device, const Problem& problem,
                                  const TuneRequest& request) = 0;
};

// How long a lease lasts and how waiting for another process's tuning goes.
struct LeaseTimes {
  double lease_seconds = 300.0;  // a process that died while tuning blocks a key this long at most
  double max_wait_seconds = 600.0;  // then a waiter gives up and tunes itself
  std::chrono::milliseconds poll{100};
};

struct Collaborators {
  std::unique_ptr<ResultStore> store;
  std::unique_ptr<KernelLoader> loader;
  std::unique_ptr<ShapeTuner> tuner;
  // The preloaded results (cache::preloaded_entries() in a real process), asked for on the first
  // lookup that needs their candidates (an autotune() they serve): reading them costs tens of
  // milliseconds, which a process that only calls gemm() never pays.
  std::function<const std::vector<cache::StoredEntry>&()> preloaded;
  // The same entries without their candidates (cache::preloaded_headers()), asked for on the
  // first lookup that reaches them without needing candidates (gemm(), the fallback, a plan's
  // parts): well under a millisecond, so that the first gemm() of a preloaded shape is as cheap
  // as one the SQLite cache serves.
  std::function<const std::vector<cache::StoredEntry>&()> preloaded_headers;
  std::string lease_owner;  // this process's ("host:pid"), unless a TuneHooks names another
  LeaseTimes lease;
  // For TunePolicy::background's workers (background_tuning.hpp): bind a thread to a device and
  // warm NVRTC up, and wait for the current device to finish its queued work. Empty (fakes):
  // nothing to do.
  std::function<void(int ordinal)> enter_device;
  std::function<void()> drain_device;
};

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

  // What autotune() returns: from the cache, the preloaded results, a tuning or the fallback.
  // The winner (and a plan's parts) is made ready for gemm() and remembered whatever the source.
  AutotuneResult autotune(const DeviceInfo& device, const Problem& problem, const Options& options);

  // Tunings run by every dispatcher of this process (a plan's parts count as tunings).
  static std::uint64_t tunings_counted();

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
  Found lookup(const DeviceInfo& device, const Problem& problem, const Call& call,
               const Options& options);
  void remember(const ShapeKey& key, const Decision& decision);

  std::optional<cache::StoredEntry> fresh_entry(const DeviceInfo& device, const Problem& problem,
                                                bool with_candidates);
  std::optional<cache::StoredEntry> usable_entry(const DeviceInfo& device, const Problem& problem);
  std::optional<cache::StoredEntry> preloaded_entry(const DeviceInfo& device, const Problem& problem,
                                                    bool with_candidates);
  std::optional<std::string> known_winner(const DeviceInfo& device, const Problem& problem);
  // The winner of a fresh, usable result of `problem` (cache, then preloaded), nothing loaded.
  std::optional<std::string> stored_winner(const DeviceInfo& device, const Problem& problem);

  Decision decide(const DeviceInfo& device, const std::string& winner);
  // A candidate's CUBIN for a tuning: the store's, else compiled and stored (not with a shared
  // store, whose CUBINs are neither loaded nor written: cache_trust.hpp).
  detail::CompiledVariant candidate_binary(const DeviceInfo& device, const Variant& v);
  // The store's CUBIN of `v` for `device`: none where the store's code may not be loaded (a
  // shared cache) or it holds none; a store failure warns and counts as none.
  std::optional<std::vector<char>> stored_cubin(const DeviceInfo& device, const Variant& v);
  const detail::LoadedKernel& load_winner(const DeviceInfo& device, const Variant& v);
  void save_cubin(const DeviceInfo& device, const detail::CompiledVariant& compiled);

  AutotuneResult tune_once(const DeviceInfo& device, const Problem& problem, const Options& options);
  AutotuneResult tune_and_store(const DeviceInfo& device, const Problem& problem,
                                const Options& options);
  Variant fallback_variant(const DeviceInfo& device, const Problem& problem);
  // The measured shapes a budgeted tuning of `problem` ranks its candidates by.
  std::vector<tuner::MeasuredShape> history_for(const DeviceInfo& device, const Problem& problem);
  void queue_background_tuning(const DeviceInfo& device, const Problem& problem,
                               const ShapeKey& key, const Options& options);
  // A background worker's job: the tune_on_miss path, then the winner remembered.
  AutotuneResult tune_in_background(const BackgroundJob& job);
  // What gemm() runs for what `found` answered: the winner (a plan's parts too) made ready, a
  // background policy's fallback queued.
  Decision ready(const DeviceInfo& device, const Problem& problem, const ShapeKey& key,
                 const Found& found, const Options& options);

  // Runs `f` on the store under its lock; a tilemm::Error becomes the warning "<failure>: <what>"
  // (none when `failure` is empty) and the answer `otherwise`.
  template <class F, class R>
  R with_store(const std::string& failure, R otherwise, F&& f);

  Collaborators parts_;
  std::shared_mutex memo_mutex_;
  std::unordered_map<ShapeKey, Decision, ShapeKeyHash> memo_;
  std::mutex locks_mutex_;
  std::map<ShapeKey, std::shared_ptr<std::mutex>> key_locks_;
  std::mutex store_mutex_;
  // Last: its workers use everything above, so it stops before any of it is destroyed.
  std::unique_ptr<BackgroundTuning> background_;
};

}  // namespace tilemm::dispatch
