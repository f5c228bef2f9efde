// tilemm::Context (tilemm/context.hpp): the checks of gemm() and autotune(), then the context's
// dispatcher (src/dispatch/dispatcher.hpp) decides what runs.
#include "tilemm/context.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "device_activity.hpp"
#include "dispatcher.hpp"
#include "gpu_bench.hpp"
#include "launch.hpp"
#include "log.hpp"
#include "option_check.hpp"
#include "real_collaborators.hpp"
#include "row_split.hpp"
#include "shape_key.hpp"
#include "stream_check.hpp"
#include "tilemm/error.hpp"

namespace tilemm {

namespace {

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
  // Operands of that class start on a multiple of it, so their rows do too only where each
  // leading dimension is a multiple: gemm() reads the class from the pointers and these, and
  // the kernels of a wider class would misread the rows.
  for (const auto& [name, ld] : {std::pair<const char*, std::int64_t>{"lda", p.lda},
                                 {"ldb", p.ldb}, {"ldc", p.ldc}})
    if (ld % p.alignment != 0)
      throw InvalidArgument("alignment", "is " + std::to_string(p.alignment) + " floats, but " +
                                             name + " = " + std::to_string(ld) +
                                             " is not a multiple of it");
}

// Kernels put tiles of rows on grid y (at most 65535 blocks). Taller problems run as slabs of
// rows, each an independent GEMM on its rows of A and C; every family's tile is >= 16 rows
// except tiled_t8, which can_run then rejects for a full slab.
constexpr std::int64_t kRowSlab = std::int64_t{65535} * 16;

// The key that a call of `args` with `options` on `device` is resolved and remembered under.
dispatch::ShapeKey key_of(const GemmArgs& args, const DeviceInfo& device, const Options& options) {
  const int alignment = alignment_class(args.A, args.B, args.C, args.lda, args.ldb, args.ldc);
  const bool dense = dispatch::dense_leading_dimensions(args.K, args.N, args.lda, args.ldb, args.ldc);
  return {device.ordinal, args.M,    args.N,           args.K,
          alignment,     dense,     options.precision, options.vendor};
}

tuner::TimingPlan plan_for(TuneEffort effort) {
  if (effort != TuneEffort::quick) return tuner::standard_timing_plan();
  const tuner::TimingPlan plan = tuner::quick_timing_plan();
  static std::once_flag said;
  std::call_once(said, [&] {
    detail::log(detail::LogLevel::info,
                "quick tuning effort: " + std::to_string(plan.warmup + plan.probe + plan.max_samples) +
                    " launches time each candidate; winners are noisier");
  });
  return plan;
}

}  // namespace

TuneEffort ContextSettings::effort_from_environment() {
  static const TuneEffort effort = [] {
    const char* value = std::getenv("TILEMM_TUNE_EFFORT");
    return value != nullptr && std::string(value) == "quick" ? TuneEffort::quick
                                                              : TuneEffort::standard;
  }();
  return effort;
}

Context::Context(ContextSettings settings)
    : Context(std::move(settings), [](const Context& self) {
        return dispatch::real_collaborators([&self] { return self.cache_path(); },
                                            plan_for(self.settings().effort));
      }) {}

Context::Context(ContextSettings settings,
                 const std::function<dispatch::Collaborators(const Context&)>& wire)
    : settings_(std::move(settings)) {
  dispatch::Collaborators parts = wire(*this);
  parts.hooks = detail::TuneHooks(settings_.hooks);
  dispatcher_ = std::make_unique<dispatch::Dispatcher>(std::move(parts));
}

Context::~Context() = default;

std::string Context::cache_path() const {
  return settings_.cache_path.empty() ? cache_path_from_environment() : settings_.cache_path;
}

void Context::wait_for_background_tunings() { dispatcher_->wait_for_background_tunings(); }

std::uint64_t Context::tunings_run() const { return dispatcher_->tunings_run(); }

AutotuneResult Context::autotune(const Problem& problem) { return autotune(problem, settings_.options); }

AutotuneResult Context::autotune(const Problem& problem, const Options& options) {
  check_tunable(problem);
  detail::check_options(options);
  Problem asked = problem;
  asked.precision = options.precision;
  asked.vendor = options.vendor;
  return dispatcher_->autotune(current_device(), asked, options);
}

AutotuneResult Context::autotune(std::int64_t M, std::int64_t N, std::int64_t K,
                                 const Options& options) {
  return autotune(Problem::dense(M, N, K, 4), options);
}

void Context::gemm(const GemmArgs& args, cudaStream_t stream) { gemm(args, stream, settings_.options); }

void Context::gemm(const GemmArgs& args, cudaStream_t stream, const Options& options) {
  validate(args);
  detail::check_options(options);
  if (args.M == 0 || args.N == 0) return;
  if (args.M > kRowSlab) {
    for (std::int64_t r0 = 0; r0 < args.M; r0 += kRowSlab)
      gemm(detail::rows_of(args, r0, std::min(kRowSlab, args.M - r0)), stream, options);
    return;
  }
  const DeviceInfo& device = current_device();
  detail::check_stream(stream, device);
  const dispatch::ShapeKey key = key_of(args, device, options);
  auto decision = dispatcher_->find(key);
  if (!decision || dispatch::resolves_again(*decision, options.policy)) {
    Problem problem = args.problem();
    problem.precision = options.precision;
    problem.vendor = options.vendor;
    // Resolving may read the cache, load a kernel, create the workspace pool or tune: work a
    // stream capture refuses, and which in global mode would end the caller's capture.
    if (detail::captures_a_graph(stream))
      throw InvalidArgument("stream", "is capturing a CUDA graph, and " + dispatch::describe(problem) +
                                          " is not resolved in this process yet (resolving it "
                                          "loads its kernel and may tune it, which cannot be "
                                          "captured): call gemm() with this shape and these "
                                          "options once before the capture");
    decision = dispatcher_->resolve(device, problem, key, options);
  }
  if (const std::int64_t rows = decision->split_rows; rows > 0) {
    // Each part is a shape of its own, dispatched to its own winner.
    detail::run_row_split(args, rows, [&](int, const GemmArgs& part) { gemm(part, stream, options); });
    return;
  }
  // Counted for a background tuning, which discards a timing this launch may have disturbed.
  const detail::CallerLaunch counted(device.ordinal);
  if (decision->prepared != nullptr)
    decision->prepared->enqueue(args, stream);
  else
    detail::launch(*decision->kernel, args, stream);
}

bool Context::resolved(const GemmArgs& args, const Options& options) {
  if (args.M == 0 || args.N == 0) return true;
  if (args.M > kRowSlab) {
    for (std::int64_t r0 = 0; r0 < args.M; r0 += kRowSlab)
      if (!resolved(detail::rows_of(args, r0, std::min(kRowSlab, args.M - r0)), options)) return false;
    return true;
  }
  const auto decision = dispatcher_->find(key_of(args, current_device(), options));
  if (!decision || dispatch::resolves_again(*decision, options.policy)) return false;
  bool parts_resolved = true;
  if (decision->split_rows > 0)
    detail::run_row_split(args, decision->split_rows, [&](int, const GemmArgs& part) {
      parts_resolved = parts_resolved && resolved(part, options);
    });
  return parts_resolved;
}

void Context::gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
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
