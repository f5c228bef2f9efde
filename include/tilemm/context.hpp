// tilemm::Context: everything that decides what a call runs, in one object instead of the
// process's environment. A context holds the cache path, the default Options (policy, budget,
// precision, vendor candidates), the timing effort of its tunings and hooks into them, and owns
// a dispatcher: its own memo of winners, its own SQLite store, its own background workers.
// Two contexts with different caches in one process tune and serve independently.
//
// Every free function whose answer depends on a dispatcher or a cache (tilemm::gemm, autotune,
// the BLAS-style gemm and gemm_strided_batched, cache_path) is a member here too, and the free
// function is that member of the default context, made on first use from the environment
// (TILEMM_CACHE, TILEMM_TUNE, ...) as documented in docs/environment.md, unless
// configure_default_context() set it up first. The C API uses the default context.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "tilemm/autotune.hpp"
#include "tilemm/blas.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {

namespace dispatch {
class Dispatcher;
struct Collaborators;
}

// How long each candidate is timed: standard, or quick (1 warm-up, 2 probes, 3 samples: for CI
// and compute-sanitizer runs, where which candidate wins does not matter; every candidate is
// still verified).
enum class TuneEffort { standard, quick };

// Hooks into the tunings a context runs, called on the tuning's thread. tilemm-tune's worker
// process reports each candidate to its watchdog through them and skips the candidates that
// took a previous worker down.
struct TuneHooks {
  // Variants not to run, with the reason to record (status launch_error).
  std::map<std::string, std::string> skip;
  // Called before a candidate touches the GPU (verification, then timing).
  std::function<void(const std::string& variant)> on_candidate;
  // Called when a candidate's launch or kernel failed, before tuning goes on.
  std::function<void(const std::string& variant, const std::string& reason)> on_launch_failure;
  // Who holds the cache lease while tuning (empty: "host:pid"). Workers that replace a crashed
  // one take over its lease under the same owner instead of waiting for it to expire.
  std::string lease_owner;

  bool empty() const { return skip.empty() && !on_candidate && !on_launch_failure && lease_owner.empty(); }
};

struct ContextSettings {
  // The SQLite cache. Empty: cache_path_from_environment(), asked when the cache is first used.
  std::string cache_path;
  // What the context's calls run with when they pass no Options of their own.
  Options options;
  // TILEMM_TUNE_EFFORT=quick (exactly; read once per process): quick, else standard.
  TuneEffort effort = effort_from_environment();
  TuneHooks hooks;

  static TuneEffort effort_from_environment();
};

class Context {
 public:
  // Cheap: the cache is opened, and a worker thread started, only when a call needs them.
  explicit Context(ContextSettings settings = {});
  // The same over other collaborators than the real cache, kernels and tuner, made by `wire`
  // from the context (tests on the CPU, with fakes; not a stable interface).
  Context(ContextSettings settings,
          const std::function<dispatch::Collaborators(const Context&)>& wire);
  // Stops the context's background workers (a tuning in flight stores nothing).
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const ContextSettings& settings() const { return settings_; }
  // settings().cache_path, else cache_path_from_environment().
  std::string cache_path() const;

  // tilemm::gemm() and tilemm::autotune() (autotune.hpp) through this context; without Options,
  // settings().options.
  void gemm(const GemmArgs& args, cudaStream_t stream = nullptr);
  void gemm(const GemmArgs& args, cudaStream_t stream, const Options& options);
  void gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
            std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
            std::int64_t ldc, cudaStream_t stream, const Options& options);
  AutotuneResult autotune(const Problem& problem);
  AutotuneResult autotune(const Problem& problem, const Options& options);
  AutotuneResult autotune(std::int64_t M, std::int64_t N, std::int64_t K, const Options& options);

  // The BLAS-style gemm() and gemm_strided_batched() (blas.hpp) through this context: the
  // row-major problem each reduces to is dispatched by gemm() above. Without Options,
  // settings().options.
  void gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
            float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
            float beta, float* C, std::int64_t ldc, cudaStream_t stream = nullptr);
  void gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
            float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
            float beta, float* C, std::int64_t ldc, cudaStream_t stream, const Options& options);
  void gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N,
                            std::int64_t K, float alpha, const float* A, std::int64_t lda,
                            std::int64_t stride_a, const float* B, std::int64_t ldb,
                            std::int64_t stride_b, float beta, float* C, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch_count,
                            cudaStream_t stream = nullptr);
  void gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N,
                            std::int64_t K, float alpha, const float* A, std::int64_t lda,
                            std::int64_t stride_a, const float* B, std::int64_t ldb,
                            std::int64_t stride_b, float beta, float* C, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch_count, cudaStream_t stream,
                            const Options& options);

  // Whether gemm(args, stream, options) would enqueue only its kernels: the key of the call, and
  // of each part it runs as (slabs of rows, a row-split plan's parts), is resolved in this
  // process, and the options' policy would not resolve it again. A CUDA graph capture records
  // only such calls (docs/api.md, "CUDA graphs"). Reads the current device; no other CUDA call.
  bool resolved(const GemmArgs& args, const Options& options);

  // Tunings this context's dispatcher ran (a plan's parts count as tunings); the free
  // tunings_run() counts those of every context of the process.
  std::uint64_t tunings_run() const;

  // Blocks until none of this context's background tunings is queued or running.
  void wait_for_background_tunings();

  // The dispatcher it owns (the library's own layers and tests; not a stable interface).
  dispatch::Dispatcher& dispatcher() { return *dispatcher_; }

 private:
  ContextSettings settings_;
  std::unique_ptr<dispatch::Dispatcher> dispatcher_;
};

// The context of the free functions. Made on first use, with the settings given to
// configure_default_context() if it was called, else ContextSettings{} (the environment); never
// destroyed, so that it serves until the very end of the process.
Context& default_context();

// Sets what the default context is made with, for a program that configures the library in code
// rather than through the environment (the command-line tools). Throws tilemm::Error
// (ErrorKind::invalid_argument) once the default context exists: call it before the first
// gemm(), autotune() or C API call.
void configure_default_context(ContextSettings settings);

// $TILEMM_CACHE if set, else ${XDG_CACHE_HOME:-$HOME/.cache}/tilemm/tuning.db; read at each call.
std::string cache_path_from_environment();

}  // namespace tilemm
