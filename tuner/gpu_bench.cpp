#include "gpu_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "cuda_check.hpp"
#include "error_bound.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "log.hpp"
#include "row_split.hpp"

namespace tilemm::tuner {
namespace {

// Enough copies of the inputs that rotating through them streams from HBM, not L2.
constexpr double kL2Multiple = 3.0;
constexpr std::size_t kMaxSets = 64;
constexpr std::size_t kMaxRotationBytes = std::size_t{2} << 30;

std::vector<float> random_floats(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (auto& x : v) x = dist(rng);
  return v;
}

float* device_alloc(std::size_t floats) {
  void* p = nullptr;
  TILEMM_CUDA(cudaMalloc(&p, std::max<std::size_t>(floats, 1) * sizeof(float)));
  return static_cast<float*>(p);
}

}  // namespace

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

GpuBench::GpuBench(const DeviceInfo& device, const Problem& problem)
    : device_(device), problem_(problem), plan_(timing_plan_from_environment()) {
  const std::size_t a_count = static_cast<std::size_t>(problem.M * problem.lda);
  const std::size_t b_count = static_cast<std::size_t>(problem.K * problem.ldb);
  const std::size_t c_count = static_cast<std::size_t>(problem.M * problem.ldc);
  const std::size_t set_bytes = (a_count + b_count + c_count) * sizeof(float);
  std::size_t sets = static_cast<std::size_t>(
      std::ceil(kL2Multiple * static_cast<double>(device.l2_bytes) / static_cast<double>(set_bytes)));
  sets = std::clamp<std::size_t>(sets, 1, kMaxSets);
  sets = std::max<std::size_t>(1, std::min(sets, kMaxRotationBytes / std::max<std::size_t>(set_bytes, 1)));

  TILEMM_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  const std::uint64_t seed = std::random_device{}();
  const auto a = random_floats(a_count, seed);
  const auto b = random_floats(b_count, seed + 1);
  for (std::size_t i = 0; i < sets; ++i) {
    sets_.push_back({device_alloc(a_count), device_alloc(b_count), device_alloc(c_count)});
    TILEMM_CUDA(cudaMemcpy(sets_.back().A, a.data(), a_count * sizeof(float), cudaMemcpyHostToDevice));
    TILEMM_CUDA(cudaMemcpy(sets_.back().B, b.data(), b_count * sizeof(float), cudaMemcpyHostToDevice));
  }

  // Reference: the naive kernel (one FMA chain per element, no tiling to get wrong) on set 0,
  // and on |A|, |B| for the magnitudes that scale the error bound.
  const auto& naive = detail::kernel_for(device_, parse_variant("naive"));
  detail::launch(naive, args_for(sets_[0]), stream_);
  TILEMM_CUDA(cudaStreamSynchronize(stream_));
  const std::size_t mn = static_cast<std::size_t>(problem.M * problem.N);
  auto download_c = [&](const Set& s) {
    std::vector<float> out(mn);
    TILEMM_CUDA(cudaMemcpy2D(out.data(), static_cast<std::size_t>(problem.N) * sizeof(float), s.C,
                             static_cast<std::size_t>(problem.ldc) * sizeof(float),
                             static_cast<std::size_t>(problem.N) * sizeof(float),
                             static_cast<std::size_t>(problem.M), cudaMemcpyDeviceToHost));
    return out;
  };
  reference_ = download_c(sets_[0]);
  {
    std::vector<float> abs_a(a), abs_b(b);
    for (auto& x : abs_a) x = std::fabs(x);
    for (auto& x : abs_b) x = std::fabs(x);
    Set scratch{device_alloc(a_count), device_alloc(b_count), device_alloc(c_count)};
    TILEMM_CUDA(cudaMemcpy(scratch.A, abs_a.data(), a_count * sizeof(float), cudaMemcpyHostToDevice));
    TILEMM_CUDA(cudaMemcpy(scratch.B, abs_b.data(), b_count * sizeof(float), cudaMemcpyHostToDevice));
    detail::launch(naive, args_for(scratch), stream_);
    TILEMM_CUDA(cudaStreamSynchronize(stream_));
    magnitude_ = download_c(scratch);
    cudaFree(scratch.A);
    cudaFree(scratch.B);
    cudaFree(scratch.C);
  }
  events_.resize(2 * static_cast<std::size_t>(
                         std::max({plan_.warmup, plan_.probe, plan_.max_samples})));
  for (auto& e : events_) TILEMM_CUDA(cudaEventCreate(&e));
}

GpuBench::~GpuBench() {
  for (auto& e : events_) cudaEventDestroy(e);
  for (auto& s : sets_) {
    cudaFree(s.A);
    cudaFree(s.B);
    cudaFree(s.C);
  }
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
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
  const auto* kernel = detail::find_loaded(device_, v);
  if (kernel == nullptr) throw Error(ErrorKind::internal, "tilemm: timing an unverified variant");
  return time_launch(
      [kernel](const GemmArgs& args, cudaStream_t stream) { detail::launch(*kernel, args, stream); },
      plan, give_up_ms);
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
    detail::launch(*core, detail::rows_of(args, 0, rows), stream);
    detail::launch(*rest, detail::rows_of(args, rows, args.M - rows), stream);
  };
}

CheckResult GpuBench::verify_plan(const RowSplitPlan& plan) {
  return verify_launch(plan_launcher(plan));
}

TimingResult GpuBench::time_plan(const RowSplitPlan& plan, double give_up_ms) {
  return time_launch(plan_launcher(plan), give_up_ms);
}

CheckResult GpuBench::verify_launch(const Launcher& launch) {
  const Set& s = sets_[0];
  // 0xFF bytes are a NaN: beta == 0 must overwrite every element without reading it.
  TILEMM_CUDA(cudaMemsetAsync(s.C, 0xFF, static_cast<std::size_t>(problem_.M * problem_.ldc) * sizeof(float), stream_));
  launch(args_for(s), stream_);
  const cudaError_t status = cudaStreamSynchronize(stream_);
  if (status != cudaSuccess)
    return {CandidateStatus::launch_error, std::string("kernel failed: ") + cudaGetErrorString(status)};
  std::vector<float> c(static_cast<std::size_t>(problem_.M * problem_.N));
  TILEMM_CUDA(cudaMemcpy2D(c.data(), static_cast<std::size_t>(problem_.N) * sizeof(float), s.C,
                           static_cast<std::size_t>(problem_.ldc) * sizeof(float),
                           static_cast<std::size_t>(problem_.N) * sizeof(float),
                           static_cast<std::size_t>(problem_.M), cudaMemcpyDeviceToHost));
  const double unit = error_bound_unit(problem_.precision, problem_.K);
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double err = std::fabs(static_cast<double>(c[i]) - reference_[i]);
    if (!(err <= unit * magnitude_[i] + 1e-30)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return {};
  const auto n = static_cast<std::size_t>(problem_.N);
  return {CandidateStatus::wrong_result,
          std::to_string(bad) + " of " + std::to_string(c.size()) + " elements wrong, first C[" +
              std::to_string(first / n) + "][" + std::to_string(first % n) + "] = " +
              std::to_string(c[first]) + ", reference " + std::to_string(reference_[first])};
}

std::vector<float> GpuBench::sample(const Launcher& launch, int launches, int first_set) {
  for (int i = 0; i < launches; ++i) {
    const Set& s = sets_[static_cast<std::size_t>(first_set + i) % sets_.size()];
    TILEMM_CUDA(cudaEventRecord(events_[2 * i], stream_));
    launch(args_for(s), stream_);
    TILEMM_CUDA(cudaEventRecord(events_[2 * i + 1], stream_));
  }
  TILEMM_CUDA(cudaStreamSynchronize(stream_));
  std::vector<float> ms(static_cast<std::size_t>(launches));
  for (int i = 0; i < launches; ++i)
    TILEMM_CUDA(cudaEventElapsedTime(&ms[i], events_[2 * i], events_[2 * i + 1]));
  return ms;
}

TimingResult GpuBench::time_launch(const Launcher& launch, double give_up_ms) {
  return time_launch(launch, plan_, give_up_ms);
}

TimingResult GpuBench::time_launch(const Launcher& launch, const TimingPlan& plan,
                                   double give_up_ms) {
  const int most = std::max({plan.warmup, plan.probe, plan.max_samples});
  if (plan.probe < 1 || 2 * static_cast<std::size_t>(most) > events_.size())
    throw Error(ErrorKind::internal, "tilemm: a timing plan needs 1 to " +
                                         std::to_string(events_.size() / 2) + " launches per step");
  TimingResult r;
  sample(launch, plan.warmup, 0);  // warm-up: clocks up, instruction cache and TLB warm
  const auto gated = [&](int n, int first) {
    return gate_ ? gate_([&] { return sample(launch, n, first); }) : sample(launch, n, first);
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
