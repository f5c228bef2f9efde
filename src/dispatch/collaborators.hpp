// What the dispatcher reaches below it, as interfaces: the SQLite store, the fleet's store
// (remote_store.hpp), the kernels of this process and NVRTC, and the tuner.
// src/dispatch/real_collaborators.cpp wires the real ones, tests/dispatcher_rig.hpp fakes, so
// that the dispatch logic is tested on the CPU.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "background_compiles.hpp"
#include "kernel_library.hpp"
#include "nvrtc_compiler.hpp"
#include "remote_store.hpp"
#include "row_split_candidates.hpp"
#include "tilemm/autotune.hpp"
#include "tune_hooks.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

// The SQLite cache as the dispatcher uses it. Any call may throw tilemm::Error; the dispatcher
// turns each failure into one warning and goes on as if the cache had no answer.
class ResultStore {
 public:
  virtual ~ResultStore() = default;
  // The entry of p's key chosen from `set` (provenance.hpp says which sets serve p).
  virtual std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                                 const std::string& problem_class,
                                                 cache::CandidateSet set, bool with_candidates) = 0;
  // The entries of one device model; their candidates only when asked (an entry holds hundreds,
  // and reading them is most of a listing's cost).
  virtual std::vector<cache::StoredEntry> list(const std::string& device_key,
                                               bool with_candidates) = 0;
  // All or nothing.
  virtual void put_all(const std::vector<cache::StoredEntry>& entries) = 0;
  // Whether this store's CUBINs may be loaded (cache_trust.hpp); false: they are neither loaded
  // nor written.
  virtual bool loads_stored_code() = 0;
  virtual std::optional<std::vector<char>> find_cubin(const std::string& arch, int nvrtc_version,
                                                      const std::string& template_hash,
                                                      const std::string& variant) = 0;
  // Whether find_cubin would find one, without reading it: a tuning asks this as it hands a
  // candidate to the compilers, and reads the image only when it verifies the candidate.
  virtual bool has_cubin(const std::string& arch, int nvrtc_version,
                         const std::string& template_hash, const std::string& variant) = 0;
  virtual void put_cubin(const detail::CompiledVariant& compiled, const std::string& arch,
                         int nvrtc_version) = 0;
  virtual bool try_acquire_lease(const std::string& key, const std::string& owner,
                                 double ttl_seconds) = 0;
  virtual void release_lease(const std::string& key, const std::string& owner) = 0;
  // A second connection to the same data, for the background worker (GuardedStore::WorkerScope),
  // so that a caller's lookup never waits behind the worker's writes. Null where there is no
  // other way to the same data (a store in memory): the worker then shares this one.
  virtual std::unique_ptr<ResultStore> another_connection() { return nullptr; }
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
  // Starts compile(v, arch)'s work off the caller's thread, so that compile() later returns at
  // once (tuner::TuneSettings::start_compile). By default nothing starts: compile() does it all.
  virtual detail::BackgroundCompile start_compile(const Variant& v, const std::string& arch) {
    (void)v;
    (void)arch;
    return detail::already_compiled();
  }
};

// A tuning of one shape with its row-split plans (tuner/row_split_candidates.hpp).
struct TuneRequest {
  std::function<void(int done, int total)> progress;
  // How the tuning gets each candidate's CUBIN: the dispatcher's looks in the store first and
  // stores what it compiles, so that a machine compiles each variant once, whatever the shape.
  tuner::Compiler compile;
  // Starts a candidate's compilation on the process's compilers (TuneSettings::start_compile);
  // empty: the tuning compiles a chunk at a time.
  std::function<detail::BackgroundCompile(const Variant&, const std::string& arch)> start_compile;
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
  // The fleet's lease (RemoteStore) is renewed every third of this while its owner tunes, so a
  // node that died while tuning holds a shape this long at most.
  double remote_lease_seconds = 30.0;
};

struct Collaborators {
  std::unique_ptr<ResultStore> store;
  std::unique_ptr<KernelLoader> loader;
  std::unique_ptr<ShapeTuner> tuner;
  // The preloaded entry of a header's key with its candidates (cache::preloaded_with_candidates()
  // in a real process), asked for by a lookup that needs them (an autotune() it serves): it
  // parses that entry's candidate table, which a process that only calls gemm() never pays.
  std::function<std::optional<cache::StoredEntry>(const cache::StoredEntry& header)>
      preloaded_with_candidates;
  // The same entries without their candidates (cache::preloaded_headers()), asked for on the
  // first lookup that reaches them without needing candidates (gemm(), the fallback, a plan's
  // parts): well under a millisecond, so that the first gemm() of a preloaded shape is as cheap
  // as one the SQLite cache serves.
  std::function<const std::vector<cache::StoredEntry>&()> preloaded_headers;
  // The same entries with only their timed candidates (cache::preloaded_timed_entries()), asked
  // for by the first budgeted tuning's history (tuning_history.hpp): all it reads of them.
  std::function<const std::vector<cache::StoredEntry>&()> preloaded_timed;
  // The fleet's store of Options::remote_cache (a URL), opened on the first lookup that names
  // it (fleet_results.hpp). Empty: no fleet store.
  RemoteOpener open_remote;
  std::string lease_owner;  // this process's ("host:pid"), unless a TuneHooks names another
  // The context's hooks (tilemm/context.hpp), for the tunings its callers start; a background
  // worker's tunings take the worker's own.
  detail::TuneHooks hooks;
  LeaseTimes lease;
  // For TunePolicy::background's workers (background_tuning.hpp): bind a thread to a device and
  // warm NVRTC up, and wait for the current device to finish its queued work. Empty (fakes):
  // nothing to do.
  std::function<void(int ordinal)> enter_device;
  std::function<void()> drain_device;
  // Runs a provider's prepared candidate once on `problem`'s shape with buffers of its own, on a
  // stream of its own, and waits for it: the vendor library's first launch loads its kernels
  // there, not in a caller's gemm() (PreparedCandidate::warmed). Empty (fakes): nothing to run.
  std::function<void(const DeviceInfo& device, const Problem& problem,
                     const detail::PreparedCandidate& candidate)>
      warm_up;
};

}  // namespace tilemm::dispatch
