// Autotuning and dispatch: tilemm::gemm() runs the fastest known variant for the current device
// and problem; tilemm::autotune() finds it (or returns what the cache already knows).
//
// Where results live: one SQLite file, $TILEMM_CACHE if set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/tilemm/tuning.db, shared by every process on the machine.
// Results are filed per device model (DeviceInfo::model_key), shape (M, N, K), problem class
// (alignment class and whether the leading dimensions are dense) and precision; an entry tuned under another
// driver, NVRTC version or kernel-template hash is stale and is re-tuned on demand.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tilemm/device.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {

enum class TunePolicy {
  tune_on_miss,  // default: a shape with no fresh result is tuned on its first call
  off,           // never tune: use the nearest tuned shape of this device, else the default variant
  // The first call runs what `off` would run at once, and a worker thread of the device tunes
  // the shape (through the tune_on_miss path: the lease, the cache); later calls run the winner
  // once it is stored. docs/tuning.md, "Background tuning", says what a caller sees.
  background,
};

struct Options {
  // Unset: from the environment, TILEMM_TUNE=off selects TunePolicy::off and
  // TILEMM_TUNE=background TunePolicy::background (read once per process: see
  // policy_from_environment).
  TunePolicy policy = policy_from_environment();
  bool force = false;  // autotune(): re-tune even when a fresh result is cached
  // Called while tuning, from the tuning thread, after each candidate: (done, total).
  std::function<void(int done, int total)> progress;
  // How long a tuning of one shape may take, in milliseconds, compiling the CUBINs the cache does
  // not hold yet included: the budgeted search (docs/tuning.md) ranks the candidates by what this
  // device measured before and times only as many as fit, by successive halving. It may run past
  // the budget by the least screening (4 candidates) and by the final comparison of the best two,
  // where that costs at most 5% of the budget. 0: the exhaustive search, every candidate timed in
  // full (tens of seconds per shape). Must be >= 0 (autotune() and gemm() throw InvalidArgument
  // otherwise). Unset: budget_from_environment().
  double tune_budget_ms = budget_from_environment();
  // How accurately gemm() and autotune() compute (tilemm/precision.hpp): highest (FP32 FFMA,
  // the default), high (3xTF32 on tensor cores) or medium (one TF32 pass). A precision is tuned,
  // cached and dispatched apart from the others. high and medium are tuned over their own kernels
  // and the FP32 ones, which are more accurate, never less: the faster wins, and the FP32 kernels
  // serve where the device has none of the precision (before sm_80). Unset:
  // precision_from_environment().
  Precision precision = precision_from_environment();
  // Whether cuBLASLt's algorithms are candidates beside tilemm's own kernels (docs/tuning.md,
  // "Vendor candidates"): tuned, cached and served like them. false: own kernels only, and a
  // stored vendor winner is not served (the shape is tuned or falls back as on a miss). Where
  // cuBLASLt cannot be loaded they are absent either way. Unset: vendor_from_environment().
  bool vendor = vendor_from_environment();
  // The fleet's shared store of tuning results (docs/fleet.md):
  // "redis://[user:password@]host:port[/db]", asked after the local cache and before the
  // preloaded results; what this process tunes is published there, and one process of the fleet
  // tunes a shape while the others wait for its result. Empty: none. Results only: kernels are
  // never read from it. A bad URL makes the first lookup that needs the store throw
  // InvalidArgument("remote cache URL"). Unset: remote_cache_from_environment().
  std::string remote_cache = remote_cache_from_environment();

  // TunePolicy::off if TILEMM_TUNE is exactly "off", background if it is exactly "background",
  // else tune_on_miss. The variable is read on the first call in the process and that answer
  // kept: later changes to the environment are not seen. Cost after the first call: returns a stored value (no getenv), so default-constructing
  // Options on every gemm() call stays cheap.
  static TunePolicy policy_from_environment();

  static constexpr double kDefaultTuneBudgetMs = 2000.0;
  // TILEMM_TUNE_BUDGET_MS when it is a number >= 0 (0: exhaustive), else kDefaultTuneBudgetMs (a
  // value that is not such a number is reported once as a warning). Read once per process, like
  // policy_from_environment().
  static double budget_from_environment();

  // TILEMM_PRECISION when it is exactly highest, high or medium, else highest (a value that is
  // none of them is reported once as a warning). Read once per process, like
  // policy_from_environment().
  static Precision precision_from_environment();

  // false if TILEMM_VENDOR is exactly "off", else true. Read once per process, like
  // policy_from_environment().
  static bool vendor_from_environment();

  // TILEMM_REMOTE_CACHE when it is a redis:// URL tilemm can read, else empty (a value that is
  // not is reported once as a warning). Read once per process, like policy_from_environment().
  static const std::string& remote_cache_from_environment();
};

enum class CandidateStatus {
  ok,            // verified and timed
  wrong_result,  // computed a result outside the error bound: never selected
  compile_error, // NVRTC failed (reason holds the first line of the log)
  launch_error,  // the launch or the kernel failed
  cannot_run,    // rejected by can_run before anything was compiled (reason says why)
  pruned,        // far slower than the best so far in its warm-up, not timed in full
};
const char* to_string(CandidateStatus s);
CandidateStatus candidate_status_from_string(const std::string& s);  // throws InvalidArgument

struct TimingStats {
  double median_ms = 0.0;
  double min_ms = 0.0;
  double spread = 0.0;  // (p90 - p10) / median of the samples
  int samples = 0;
};

struct CandidateResult {
  std::string variant;  // canonical name
  CandidateStatus status = CandidateStatus::ok;
  std::string reason;   // empty when ok
  TimingStats stats;    // meaningful when ok (and, partly, when pruned)
  double compile_ms = 0.0;
};

enum class ResultSource {
  tuned,      // tuned by this call
  cache,      // a fresh entry of the SQLite cache, tuned on this machine
  imported,   // a fresh entry imported from JSON
  remote,     // a fresh entry of the fleet's Redis store (Options::remote_cache), tuned elsewhere
  preloaded,  // a preloaded result shipped with tilemm
  fallback,   // nothing tuned: nearest tuned shape or the default variant (policy off)
};
const char* to_string(ResultSource s);

struct AutotuneResult {
  std::string device_key;  // DeviceInfo::model_key()
  Problem problem;
  std::string problem_class;
  // Canonical variant name, or a row-split plan "rowsplit_h<h>": rows [0, h) and [h, M) run as
  // problems of their own, each with its own winner (docs/tuning.md, row-split plans).
  std::string winner;
  double median_ms = 0.0;
  double tflops = 0.0;
  double margin = 0.0;      // runner-up median / winner median - 1 (0 with a single candidate)
  std::vector<CandidateResult> candidates;  // sorted by median, failures last
  ResultSource source = ResultSource::tuned;
  double tuning_seconds = 0.0;  // wall time of this tuning (0 when served from the cache)
  std::string tuned_at;         // ISO-8601 UTC
};

// The tuning result for an M x N x K problem on the current device, with dense leading
// dimensions and 16-byte-aligned pointers (what cudaMalloc returns). Looks in the SQLite cache,
// then the preloaded caches; on a miss (or with options.force) it tunes, unless options.policy
// is TunePolicy::off: then it returns, with source fallback and no candidates, the variant gemm()
// would run (nearest tuned shape or the default). Under TunePolicy::background it returns that
// fallback too, without waiting, and queues the shape for the device's background worker. Tuning compiles every candidate with NVRTC in
// parallel, verifies each, times each (tens of milliseconds per candidate), and stores the result
// and the winner's CUBIN. Whatever the source, the winner is loaded and its CUBIN cached, so
// later gemm() calls compile nothing. Touches the disk; synchronizes the device while tuning.
// Throws InvalidArgument for dimensions < 1, Error without a device.
AutotuneResult autotune(std::int64_t M, std::int64_t N, std::int64_t K, const Options& options = {});
// The same for an explicit problem (leading dimensions and alignment class). Its precision is
// options.precision: problem.precision is ignored (the result's problem carries the one used).
AutotuneResult autotune(const Problem& problem, const Options& options = {});

// C = alpha * A * B + beta * C (see gemm.hpp for the exact contract and its errors), run with
// the winner for this device and problem. After the first call of a shape in a process it costs
// one in-memory lookup and one kernel launch: no SQLite query, no compilation. The first call of
// a shape may tune (policy tune_on_miss) or load a cached CUBIN; under TunePolicy::background it
// runs the fallback and queues the tuning, and a later call runs the winner once the worker has
// stored it. Asynchronous on `stream`.
void gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
          std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc, cudaStream_t stream = nullptr, const Options& options = {});
void gemm(const GemmArgs& args, cudaStream_t stream = nullptr, const Options& options = {});

// The problem class a problem is filed under: "a4-dense", "a1-strided", ...
std::string problem_class(const Problem& problem);

// The path of the SQLite cache this process uses (see the top of this file).
std::string cache_path();

// Counters for tests and benchmarks: NVRTC compilations and tunings run by this process, and the
// queries of a vendor heuristic (cublasLtMatmulAlgoGetHeuristic) it made.
std::uint64_t nvrtc_compilations();
std::uint64_t tunings_run();
std::uint64_t vendor_heuristic_queries();

}  // namespace tilemm
