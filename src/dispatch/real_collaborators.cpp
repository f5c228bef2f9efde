#include "real_collaborators.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "candidate_warm_up.hpp"
#include "compiled_variants.hpp"
#include "cuda_check.hpp"
#include "gpu_bench.hpp"
#include "kernel_sources.hpp"
#include "lease_owner.hpp"
#include "log.hpp"
#include "nvrtc_compiler.hpp"
#include "preloaded.hpp"
#include "redis_remote_store.hpp"
#include "row_split.hpp"
#include "store_open.hpp"

namespace tilemm::dispatch {
namespace {

using detail::log;
using detail::LogLevel;

class CacheResultStore : public ResultStore {
 public:
  explicit CacheResultStore(std::function<std::string()> path) : path_(std::move(path)) {}
  // A connection already open (another_connection).
  CacheResultStore(std::function<std::string()> path, cache::OpenedStore opened)
      : path_(std::move(path)) {
    adopt(std::move(opened));
  }

  std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                         const std::string& problem_class, cache::CandidateSet set,
                                         bool with_candidates) override {
    return store().find(device_key, p.M, p.N, p.K, problem_class, p.precision, set,
                        with_candidates);
  }
  std::vector<cache::StoredEntry> list(const std::string& device_key, bool with_candidates) override {
    return store().list(device_key, with_candidates);
  }
  void put_all(const std::vector<cache::StoredEntry>& entries) override { store().put_all(entries); }
  bool loads_stored_code() override {
    store();
    return loads_stored_code_;
  }
  std::optional<std::vector<char>> find_cubin(const std::string& arch, int nvrtc_version,
                                              const std::string& template_hash,
                                              const std::string& variant) override {
    return store().find_cubin(arch, nvrtc_version, template_hash, variant);
  }
  bool has_cubin(const std::string& arch, int nvrtc_version, const std::string& template_hash,
                 const std::string& variant) override {
    return store().has_cubin(arch, nvrtc_version, template_hash, variant);
  }
  void put_cubin(const detail::CompiledVariant& compiled, const std::string& arch,
                 int nvrtc_version) override {
    store().put_cubin(arch, nvrtc_version, compiled.template_hash, compiled.name, compiled.cubin);
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    return store().try_acquire_lease(key, owner, ttl);
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    store().release_lease(key, owner);
  }
  // Only to a file this connection has open: a second connection that fell back to memory would
  // keep the worker's results from the callers and from other processes.
  std::unique_ptr<ResultStore> another_connection() override {
    store();
    if (!persistent_) return nullptr;
    cache::OpenedStore opened = cache::open_persistent_store(store_->path());
    if (!opened.persistent || !opened.store) return nullptr;
    return std::make_unique<CacheResultStore>(path_, std::move(opened));
  }

 private:
  // Opened on first use. A cache that cannot be used is never fatal: open_store moves a damaged
  // file aside or falls back to memory, and says so once.
  cache::TuningStore& store() {
    if (!store_) {
      const std::string path = path_();
      adopt(detail::timed_step("the cache " + path + " opened",
                               [&] { return cache::open_store(path); }));
    }
    return *store_;
  }

  void adopt(cache::OpenedStore opened) {
    if (!opened.warning.empty()) log(LogLevel::warn, opened.warning);
    loads_stored_code_ = opened.code_trust.loads_stored_code;
    if (!loads_stored_code_)
      log(LogLevel::warn, "the cache '" + opened.store->path() + "' is shared (" +
                              opened.code_trust.reason +
                              "): its tuning results are used, but its stored kernels are not "
                              "loaded; each is compiled in this process instead");
    persistent_ = opened.persistent;
    store_ = std::move(opened.store);
  }

  std::function<std::string()> path_;
  std::unique_ptr<cache::TuningStore> store_;
  bool loads_stored_code_ = true;  // the opened store's code_trust (cache_trust.hpp)
  bool persistent_ = false;        // a file, not memory
};

class RuntimeKernelLoader : public KernelLoader {
 public:
  const detail::LoadedKernel* find_loaded(const DeviceInfo& device, const Variant& v) override {
    return detail::find_loaded(device, v);
  }
  const detail::LoadedKernel& load(const DeviceInfo& device, const Variant& v,
                                   const std::vector<char>& cubin) override {
    return detail::load_kernel(device, v, cubin);
  }
  // Once per process (compiled_variants.hpp): with a shared store, which keeps no CUBINs, a
  // second tuning in the process still compiles nothing twice.
  detail::CompiledVariant compile(const Variant& v, const std::string& arch) override {
    return detail::compile_variant_once(v, arch);
  }
  detail::BackgroundCompile start_compile(const Variant& v, const std::string& arch) override {
    return detail::compile_in_background(v, arch);
  }
};

class GpuShapeTuner : public ShapeTuner {
 public:
  explicit GpuShapeTuner(tuner::TimingPlan plan) : plan_(plan) {}

  tuner::ShapeTuning tune(const DeviceInfo& device, const Problem& problem,
                          const TuneRequest& request) override {
    const auto setup_start = std::chrono::steady_clock::now();
    const detail::TuneHooks* hooks = request.hooks;
    const tuner::GpuBench::SampleGate gate = hooks != nullptr ? hooks->sample_gate : nullptr;
    tuner::GpuBench bench(device, problem, plan_);
    bench.set_sample_gate(gate);
    tuner::TuneSettings settings;
    // The bench's setup (inputs, reference) is part of the tuning the budget bounds.
    if (request.budget_ms > 0) {
      const double setup_ms = std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - setup_start)
                                  .count();
      settings.budget_ms = std::max(request.budget_ms - setup_ms, 1.0);
      settings.history = request.history;
    }
    settings.progress = request.progress;
    settings.highest_winner = request.highest_winner;
    if (request.compile) settings.compile = request.compile;
    if (request.start_compile) settings.start_compile = request.start_compile;
    if (hooks != nullptr) {
      settings.skip = hooks->skip;
      settings.on_launch_failure = hooks->on_launch_failure;
      // Before each candidate: a stop (background tuning at exit) ends the tuning here.
      settings.on_candidate = [hooks](const std::string& variant) {
        detail::stop_if_requested(hooks);
        if (hooks->on_candidate) hooks->on_candidate(variant);
      };
    }
    tuner::PlanSettings plans;
    plans.bench_for = [&device, gate, plan = plan_](const Problem& part) -> std::unique_ptr<tuner::CandidateBench> {
      auto part_bench = std::make_unique<tuner::GpuBench>(device, part, plan);
      part_bench->set_sample_gate(gate);
      return part_bench;
    };
    plans.known_winners = request.known_part_winners;
    plans.highest_part_winners = request.highest_part_winners;
    return tuner::tune_with_plans(device, problem, bench, settings, plans);
  }

 private:
  tuner::TimingPlan plan_;
};

}  // namespace

Collaborators real_collaborators(std::function<std::string()> cache_path,
                                 const tuner::TimingPlan& plan) {
  Collaborators parts;
  parts.store = std::make_unique<CacheResultStore>(std::move(cache_path));
  parts.loader = std::make_unique<RuntimeKernelLoader>();
  parts.tuner = std::make_unique<GpuShapeTuner>(plan);
  parts.preloaded_with_candidates = [](const cache::StoredEntry& header) {
    return cache::preloaded_with_candidates(header, detail::why_not_a_known_name);
  };
  parts.preloaded_headers = []() -> const std::vector<cache::StoredEntry>& {
    return cache::preloaded_headers(detail::why_not_a_known_name);
  };
  parts.preloaded_timed = []() -> const std::vector<cache::StoredEntry>& {
    return cache::preloaded_timed_entries(detail::why_not_a_known_name);
  };
  parts.open_remote = [](const std::string& url) {
    RemoteTimes times;
    times.timeout = remote_timeout_from_environment();
    return open_redis_store(url, times);
  };
  parts.lease_owner = cache::process_lease_owner();
  parts.enter_device = [](int ordinal) {
    TILEMM_CUDA(cudaSetDevice(ordinal));
    detail::warm_up_nvrtc(query_device(ordinal).arch());
  };
  parts.drain_device = [] { TILEMM_CUDA(cudaDeviceSynchronize()); };
  parts.warm_up = detail::warm_up_candidate;
  return parts;
}

}  // namespace tilemm::dispatch
