#include "gpu_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "cuda_check.hpp"
#include "error_bound.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "log.hpp"
#include "nvrtc_compiler.hpp"
#include "row_split.hpp"
#include "support_kernels.hpp"
#include "timing_method.hpp"

namespace tilemm::tuner {

TimingPlan standard_timing_plan() { return {}; }

TimingPlan quick_timing_plan() {
  TimingPlan p;
  p.warmup = 1;
  p.probe = 2;
  p.min_samples = 3;
  p.max_samples = 3;
  return p;
}

namespace {
bool is_quick(const char* effort) { return effort != nullptr && std::string(effort) == "quick"; }
}  // namespace

TimingPlan timing_plan_for(const char* effort) {
  return is_quick(effort) ? quick_timing_plan() : standard_timing_plan();
}

TimingPlan timing_plan_from_environment() {
  static const TimingPlan plan = [] {
    const char* effort = std::getenv("TILEMM_TUNE_EFFORT");
    const TimingPlan p = timing_plan_for(effort);
    if (is_quick(effort))
      detail::log(detail::LogLevel::info,
                  "TILEMM_TUNE_EFFORT=quick: " + std::to_string(p.warmup + p.probe + p.max_samples) +
                      " launches time each candidate; winners are noisier");
    return p;
  }();
  return plan;
}

TimingStats summarize(std::vector<float> samples) {
  TimingStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const auto at = [&](double q) {
    return samples[static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5)];
  };
  s.samples = static_cast<int>(samples.size());
  s.min_ms = samples.front();
  const std::size_t n = samples.size();
  s.median_ms = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.spread = s.median_ms > 0 ? (at(0.9) - at(0.1)) / s.median_ms : 0.0;
  return s;
}

GpuBench::GpuBench(const DeviceInfo& device, const Problem& problem, const TimingPlan& plan)
    : device_(device),
      problem_(problem),
      plan_(plan),
      input_mode_(tuner::input_mode(problem, device.l2_bytes)),
      stream_(device.ordinal) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point started = Clock::now();
  // Measuring a step means waiting for it, which would keep the reference from overlapping the
  // caller's compilation: only when someone reads the figures.
  const bool measure = detail::log_enabled(detail::LogLevel::debug);
  const auto finished = [&] {
    if (measure) TILEMM_CUDA(cudaStreamSynchronize(stream_.get()));
    return Clock::now();
  };

  const std::size_t a_count = static_cast<std::size_t>(problem.M * problem.lda);
  const std::size_t b_count = static_cast<std::size_t>(problem.K * problem.ldb);
  const std::size_t c_count = static_cast<std::size_t>(problem.M * problem.ldc);
  const std::size_t set_bytes = (a_count + b_count + c_count) * sizeof(float);
  const std::size_t sets = input_set_count(problem, device.l2_bytes);

  inputs_ = allocate_sets(sets);
  const std::size_t mn = static_cast<std::size_t>(problem.M * problem.N);
  reference_ = allocate(mn);
  magnitude_ = allocate(mn);
  outside_ = allocate(sizeof(detail::OutsideBound) / sizeof(float));
  timer_ = std::make_unique<LaunchTimer>(device_);
  const Clock::time_point allocated = finished();

  const std::uint64_t compiles_before = detail::nvrtc_compile_count();
  std::random_device entropy;
  fill_inputs(inputs_, (std::uint64_t{entropy()} << 32) ^ entropy());
  const Clock::time_point filled = finished();
  // The support kernels' first use in the process compiles them (or another thread compiled).
  const bool compiled = detail::nvrtc_compile_count() != compiles_before;

  // The reference: the naive kernel's arithmetic on set 0, with the magnitudes |A| |B| that
  // scale the error bound, in one pass.
  const Set& s = inputs_.sets[0];
  detail::reference_product(device_, problem.M, problem.N, problem.K, s.A, problem.lda,
                            s.B, problem.ldb, reference_->floats(), magnitude_->floats(),
                            stream_.get());
  if (!measure) return;
  const Clock::time_point referenced = finished();
  const auto ms = [](Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  };
  char line[480];
  std::snprintf(line, sizeof line,
                "bench setup for %lldx%lldx%lld: inputs %s (working set %.1f MiB, L2 %.1f MiB: "
                "tuner/timing_method.hpp), %zu input sets of %.1f MiB; allocation %.2f ms, "
                "random fill %.2f ms%s, reference %.2f ms (each step waited for; without "
                "TILEMM_LOG=debug the steps overlap the caller's work)",
                static_cast<long long>(problem.M), static_cast<long long>(problem.N),
                static_cast<long long>(problem.K), input_mode_name(input_mode_),
                static_cast<double>(working_set_bytes(problem)) / (1 << 20),
                static_cast<double>(device.l2_bytes) / (1 << 20), sets,
                static_cast<double>(set_bytes) / (1 << 20),
                ms(started, allocated), ms(allocated, filled),
                compiled ? " (with an NVRTC compilation: the support kernels' first use)" : "",
                ms(filled, referenced));
  detail::log(detail::LogLevel::debug, line);
}

GpuBench::~GpuBench() = default;

GpuBench::Buffer GpuBench::allocate(std::size_t floats) const {
  return std::make_unique<detail::StreamWorkspace>(std::max<std::size_t>(floats, 1) * sizeof(float),
                                                   device_.ordinal, stream_.get());
}

namespace {

// A set's share of an operand's buffer: rounded up to 64 floats, so that every set starts as
// aligned as the buffer itself (the vectorized and TMA families need 16 bytes).
std::size_t set_stride(std::size_t floats) { return (std::max<std::size_t>(floats, 1) + 63) / 64 * 64; }

}  // namespace

GpuBench::InputSets GpuBench::allocate_sets(std::size_t count) const {
  const std::size_t a_stride = set_stride(static_cast<std::size_t>(problem_.M * problem_.lda));
  const std::size_t b_stride = set_stride(static_cast<std::size_t>(problem_.K * problem_.ldb));
  const std::size_t c_stride = set_stride(static_cast<std::size_t>(problem_.M * problem_.ldc));
  InputSets inputs;
  inputs.A = allocate(a_stride * count);
  inputs.B = allocate(b_stride * count);
  inputs.C = allocate(c_stride * count);
  for (std::size_t i = 0; i < count; ++i)
    inputs.sets.push_back({inputs.A->floats() + i * a_stride, inputs.B->floats() + i * b_stride,
                           inputs.C->floats() + i * c_stride});
  return inputs;
}

// One fill per operand over all its sets, padding included (harmless: past K in A, past N in B).
void GpuBench::fill_inputs(InputSets& inputs, std::uint64_t seed) {
  const std::size_t count = inputs.sets.size();
  const std::size_t a_floats = set_stride(static_cast<std::size_t>(problem_.M * problem_.lda)) * count;
  const std::size_t b_floats = set_stride(static_cast<std::size_t>(problem_.K * problem_.ldb)) * count;
  detail::fill_uniform(device_, inputs.A->floats(), a_floats, seed, stream_.get());
  detail::fill_uniform(device_, inputs.B->floats(), b_floats, seed + 1, stream_.get());
}

const std::vector<GpuBench::Set>& GpuBench::sets_for(InputMode mode) {
  if (mode == input_mode_) return inputs_.sets;
  if (mode == InputMode::same_buffers)
    throw Error(ErrorKind::internal, "tilemm: a rotated problem's bench times no same-buffers launches");
  if (rotated_.sets.empty()) {
    // Only timed launches read them, never a verification: random values of any seed will do.
    // Allocated and filled on the bench's stream, so the launches that follow wait for them.
    InputSets sets = allocate_sets(rotated_set_count(problem_, device_.l2_bytes));
    std::random_device entropy;
    fill_inputs(sets, (std::uint64_t{entropy()} << 32) ^ entropy());
    rotated_ = std::move(sets);
    if (detail::log_enabled(detail::LogLevel::debug))
      detail::log(detail::LogLevel::debug,
                  "bench of " + std::to_string(problem_.M) + "x" + std::to_string(problem_.N) + "x" +
                      std::to_string(problem_.K) + ": " + std::to_string(rotated_.sets.size()) +
                      " rotated input sets allocated for the finalists' look at rotated inputs");
  }
  return rotated_.sets;
}

GemmArgs GpuBench::args_for(const Set& s) const {
  GemmArgs a;
  a.M = problem_.M;
  a.N = problem_.N;
  a.K = problem_.K;
  a.alpha = 1.0f;
  a.beta = 0.0f;
  a.A = s.A;
  a.lda = problem_.lda;
  a.B = s.B;
  a.ldb = problem_.ldb;
  a.C = s.C;
  a.ldc = problem_.ldc;
  return a;
}

CheckResult GpuBench::verify(const Variant& v, const detail::CompiledVariant& compiled) {
  const auto& kernel = detail::load_kernel(device_, v, compiled.cubin);
  return verify_launch(
      [&kernel](const GemmArgs& args, cudaStream_t stream) { detail::launch(kernel, args, stream); });
}

TimingResult GpuBench::time(const Variant& v, double give_up_ms) {
  return time_with(v, plan_, give_up_ms);
}

TimingResult GpuBench::time_with(const Variant& v, const TimingPlan& plan, double give_up_ms) {
  return time_in_mode(v, plan, give_up_ms, input_mode_);
}

TimingResult GpuBench::time_in_mode(const Variant& v, const TimingPlan& plan, double give_up_ms,
                                    InputMode mode) {
  const auto* kernel = detail::find_loaded(device_, v);
  if (kernel == nullptr) throw Error(ErrorKind::internal, "tilemm: timing an unverified variant");
  return time_launch(
      [kernel](const GemmArgs& args, cudaStream_t stream) { detail::launch(*kernel, args, stream); },
      plan, give_up_ms, mode);
}

GpuBench::Launcher GpuBench::plan_launcher(const RowSplitPlan& plan) {
  const auto loaded = [this](const Variant& v) -> const detail::LoadedKernel& {
    const auto* kernel = detail::find_loaded(device_, v);
    return kernel != nullptr ? *kernel : detail::kernel_for(device_, v);
  };
  const detail::LoadedKernel* core = &loaded(plan.core);
  const detail::LoadedKernel* rest = &loaded(plan.rest);
  const std::int64_t rows = plan.core_rows;
  return [core, rest, rows](const GemmArgs& args, cudaStream_t stream) {
    detail::run_row_split(args, rows, [&](int part, const GemmArgs& part_args) {
      detail::launch(part == 0 ? *core : *rest, part_args, stream);
    });
  };
}

CheckResult GpuBench::verify_plan(const RowSplitPlan& plan) {
  return verify_launch(plan_launcher(plan));
}

TimingResult GpuBench::time_plan(const RowSplitPlan& plan, double give_up_ms) {
  return time_launch(plan_launcher(plan), give_up_ms);
}

CheckResult GpuBench::verify_launch(const Launcher& launch) {
  const Set& s = inputs_.sets[0];
  cudaStream_t stream = stream_.get();
  float* const c = s.C;
  // 0xFF bytes are a NaN: beta == 0 must overwrite every element without reading it.
  TILEMM_CUDA(cudaMemsetAsync(c, 0xFF, static_cast<std::size_t>(problem_.M * problem_.ldc) * sizeof(float), stream));
  launch(args_for(s), stream);
  // Waited for alone, so that a kernel's failure is its launch_error, not a later call's error.
  const cudaError_t status = cudaStreamSynchronize(stream);
  if (status != cudaSuccess)
    return {CandidateStatus::launch_error, std::string("kernel failed: ") + cudaGetErrorString(status)};
  const double unit = error_bound_unit(problem_.precision, problem_.K);
  auto* const outside_on_device = static_cast<detail::OutsideBound*>(static_cast<void*>(outside_->floats()));
  detail::count_outside_bound(device_, problem_.M, problem_.N, c, problem_.ldc, reference_->floats(),
                              magnitude_->floats(), unit, outside_on_device, stream);
  detail::OutsideBound outside;
  TILEMM_CUDA(cudaMemcpyAsync(&outside, outside_on_device, sizeof outside, cudaMemcpyDeviceToHost, stream));
  TILEMM_CUDA(cudaStreamSynchronize(stream));
  if (outside.count == 0) return {};

  // The first wrong element and its reference, for the message.
  const auto n = static_cast<std::uint64_t>(problem_.N);
  const auto row = static_cast<std::int64_t>(outside.first / n), col = static_cast<std::int64_t>(outside.first % n);
  float got = 0.0f, want = 0.0f;
  TILEMM_CUDA(cudaMemcpyAsync(&got, c + row * problem_.ldc + col, sizeof got, cudaMemcpyDeviceToHost, stream));
  TILEMM_CUDA(cudaMemcpyAsync(&want, reference_->floats() + outside.first, sizeof want,
                              cudaMemcpyDeviceToHost, stream));
  TILEMM_CUDA(cudaStreamSynchronize(stream));
  return {CandidateStatus::wrong_result,
          std::to_string(outside.count) + " of " + std::to_string(problem_.M * problem_.N) +
              " elements wrong, first C[" + std::to_string(row) + "][" + std::to_string(col) +
              "] = " + std::to_string(got) + ", reference " + std::to_string(want)};
}

std::vector<float> GpuBench::sample(const Launcher& launch, const std::vector<Set>& sets,
                                    int launches, int first_set) {
  return timer_->time(stream_.get(), launches, [&](int i) {
    launch(args_for(sets[static_cast<std::size_t>(first_set + i) % sets.size()]), stream_.get());
  });
}

TimingResult GpuBench::time_launch(const Launcher& launch, double give_up_ms) {
  return time_launch(launch, plan_, give_up_ms);
}

TimingResult GpuBench::time_launch(const Launcher& launch, const TimingPlan& plan,
                                   double give_up_ms) {
  return time_launch(launch, plan, give_up_ms, input_mode_);
}

TimingResult GpuBench::time_launch(const Launcher& launch, const TimingPlan& plan,
                                   double give_up_ms, InputMode mode) {
  if (plan.probe < 1)
    throw Error(ErrorKind::internal, "tilemm: a timing plan needs at least 1 probe launch");
  const std::vector<Set>& sets = sets_for(mode);
  TimingResult r;
  sample(launch, sets, plan.warmup, 0);  // warm-up: clocks up, instruction cache and TLB warm
  const auto gated = [&](int n, int first) {
    return gate_ ? gate_([&] { return sample(launch, sets, n, first); })
                 : sample(launch, sets, n, first);
  };
  const auto probe = summarize(gated(plan.probe, plan.warmup));
  if (probe.median_ms > give_up_ms || plan.max_samples == 0) {
    r.stats = probe;
    r.pruned = probe.median_ms > give_up_ms;
    return r;
  }
  const int n = std::clamp(static_cast<int>(plan.target_ms / std::max(probe.median_ms, 1e-3)),
                           plan.min_samples, plan.max_samples);
  r.stats = summarize(gated(n, plan.warmup + plan.probe));
  return r;
}

}  // namespace tilemm::tuner
