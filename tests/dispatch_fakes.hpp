// Fakes of the dispatcher's collaborators (src/dispatch/collaborators.hpp) for the CPU tests of
// the fleet and of tilemm::Context: a local cache in memory, a kernel loader that loads nothing,
// a tuner that always picks one winner (taking a while if asked) and records what it was
// handed, and the wiring of a dispatcher over them. tests/dispatcher_rig.hpp has fuller fakes
// of the local cache, for the dispatch logic itself.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "dispatcher.hpp"
#include "provenance.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"

namespace tilemm::testing {

// The synthetic H200 with the versions the fakes' entries are fresh for.
inline DeviceInfo fake_device() {
  DeviceInfo d = synthetic_h200();
  d.nvrtc_version = 13000;
  d.driver_version = 13000;
  return d;
}

// A cache file in memory: entries by shape, class, precision and candidate set, and its leases.
class MemoryStore : public dispatch::ResultStore {
 public:
  std::map<std::string, cache::StoredEntry> entries;
  std::map<std::string, std::string> leases;
  std::vector<std::string> lease_askers;  // the owner of every lease asked for, in order
  int puts = 0;

  static std::string key(std::int64_t M, std::int64_t N, std::int64_t K, const std::string& c,
                         Precision p, cache::CandidateSet set) {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + c +
           to_string(p) + to_string(set);
  }
  std::optional<cache::StoredEntry> find(const std::string&, const Problem& p,
                                         const std::string& c, cache::CandidateSet set,
                                         bool) override {
    const auto it = entries.find(key(p.M, p.N, p.K, c, p.precision, set));
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
  std::vector<cache::StoredEntry> list(const std::string&, bool with_candidates) override {
    std::vector<cache::StoredEntry> all;
    for (const auto& [k, e] : entries) {
      all.push_back(e);
      if (!with_candidates) all.back().candidates.clear();
    }
    return all;
  }
  void put_all(const std::vector<cache::StoredEntry>& all) override {
    ++puts;
    for (const auto& e : all)
      entries[key(e.M, e.N, e.K, e.problem_class, e.precision, e.candidate_set)] = e;
  }
  bool loads_stored_code() override { return true; }
  std::optional<std::vector<char>> find_cubin(const std::string&, int, const std::string&,
                                              const std::string&) override {
    return std::nullopt;
  }
  bool has_cubin(const std::string&, int, const std::string&, const std::string&) override {
    return false;
  }
  void put_cubin(const detail::CompiledVariant&, const std::string&, int) override {}
  bool try_acquire_lease(const std::string& k, const std::string& owner, double) override {
    lease_askers.push_back(owner);
    auto [it, added] = leases.emplace(k, owner);
    return added || it->second == owner;
  }
  void release_lease(const std::string& k, const std::string& owner) override {
    if (leases.count(k) && leases[k] == owner) leases.erase(k);
  }
};

class NullLoader : public dispatch::KernelLoader {
 public:
  std::map<std::string, std::unique_ptr<detail::LoadedKernel>> loaded;
  const detail::LoadedKernel* find_loaded(const DeviceInfo&, const Variant& v) override {
    const auto it = loaded.find(variant_name(v));
    return it == loaded.end() ? nullptr : it->second.get();
  }
  const detail::LoadedKernel& load(const DeviceInfo&, const Variant& v,
                                   const std::vector<char>&) override {
    auto& slot = loaded[variant_name(v)];
    if (!slot) {
      slot = std::make_unique<detail::LoadedKernel>();
      slot->variant = v;
    }
    return *slot;
  }
  detail::CompiledVariant compile(const Variant& v, const std::string& arch) override {
    detail::CompiledVariant c;
    c.name = variant_name(v);
    c.arch = arch;
    c.cubin = {'C'};
    return c;
  }
};

// Always picks `winner`, after `duration`; announces it to the tuning's hooks as its one
// candidate, and records the M of each shape it tuned and the lease owner of the hooks it was
// handed ("(no hooks)" where none).
class FixedTuner : public dispatch::ShapeTuner {
 public:
  explicit FixedTuner(std::string winner,
                      std::chrono::milliseconds duration = std::chrono::milliseconds(0))
      : duration_(duration), winner_(std::move(winner)) {}
  std::atomic<int> tunings{0};
  tuner::ShapeTuning tune(const DeviceInfo&, const Problem& problem,
                          const dispatch::TuneRequest& request) override {
    ++tunings;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tuned.push_back(problem.M);
      hook_owners.push_back(request.hooks != nullptr ? request.hooks->lease_owner : "(no hooks)");
    }
    if (request.hooks != nullptr && request.hooks->on_candidate) request.hooks->on_candidate(winner_);
    std::this_thread::sleep_for(duration_);
    tuner::ShapeTuning t;
    t.outcome.winner = winner_;
    t.outcome.median_ms = 1.0;
    CandidateResult c;
    c.variant = winner_;
    c.stats = {1.0, 1.0, 0.0, 1};
    t.outcome.candidates = {c};
    t.outcome.winner_binary.name = winner_;
    t.outcome.winner_binary.cubin = {'T'};
    return t;
  }
  // Read when no tuning runs.
  std::vector<std::int64_t> tuned;
  std::vector<std::string> hook_owners;

 private:
  std::mutex mutex_;
  std::chrono::milliseconds duration_;
  std::string winner_;
};

inline const std::vector<cache::StoredEntry>& no_preloaded() {
  static const std::vector<cache::StoredEntry> none;
  return none;
}

// The collaborators of a dispatcher over `store` and `tuner`, with a NullLoader and no preloaded
// results, its leases asked for by `owner`.
inline dispatch::Collaborators fake_collaborators(std::unique_ptr<dispatch::ResultStore> store,
                                                  std::unique_ptr<dispatch::ShapeTuner> tuner,
                                                  std::string owner) {
  dispatch::Collaborators parts;
  parts.store = std::move(store);
  parts.loader = std::make_unique<NullLoader>();
  parts.tuner = std::move(tuner);
  parts.preloaded_with_candidates = [](const cache::StoredEntry&) {
    return std::optional<cache::StoredEntry>();
  };
  parts.preloaded_headers = []() -> const std::vector<cache::StoredEntry>& {
    return no_preloaded();
  };
  parts.preloaded_timed = parts.preloaded_headers;
  parts.lease_owner = std::move(owner);
  return parts;
}

// A dispatcher for one "process" of the fleet: its own local cache, `open_remote` for the fleet.
struct FleetProcess {
  MemoryStore* local = nullptr;
  FixedTuner* tuner = nullptr;
  std::unique_ptr<dispatch::Dispatcher> dispatcher;

  FleetProcess(std::string owner,
               std::function<std::unique_ptr<dispatch::RemoteStore>(const std::string&)> open_remote,
               std::chrono::milliseconds tune_time = std::chrono::milliseconds(0),
               dispatch::LeaseTimes times = {}) {
    auto store = std::make_unique<MemoryStore>();
    auto fixed = std::make_unique<FixedTuner>("tiled_t16_p0", tune_time);
    local = store.get();
    tuner = fixed.get();
    dispatch::Collaborators parts =
        fake_collaborators(std::move(store), std::move(fixed), std::move(owner));
    parts.open_remote = std::move(open_remote);
    parts.lease = times;
    dispatcher = std::make_unique<dispatch::Dispatcher>(std::move(parts));
  }

  AutotuneResult autotune(const Problem& p, const std::string& url,
                          TunePolicy policy = TunePolicy::tune_on_miss) {
    Options options;
    options.policy = policy;
    options.remote_cache = url;
    return dispatcher->autotune(fake_device(), p, options);
  }
};

}  // namespace tilemm::testing
