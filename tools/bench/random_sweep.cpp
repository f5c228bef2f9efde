#include "random_sweep.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "bench_harness.hpp"
#include "cublas_check.hpp"
#include "error_bound.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace tilemm::bench {
namespace {

// Two marks for a shape's ratio to cuBLAS (rotated inputs): the shapes below the first are
// listed, and the summary counts the shapes at or above each.
constexpr double kListedBelow = 0.95;
constexpr double kAlsoCountedAt = 0.9;

struct Run {
  const char* name;
  bool vendor;
  std::vector<double> ratios;       // cuBLAS time / tilemm time, rotated inputs (L2-cold)
  std::vector<double> warm_ratios;  // the same inputs every launch (L2-warm)
  std::vector<double> called_ratios;  // calls back to back, host time included (rotated inputs)
  std::vector<double> first_call_s; // the shape's first call, which tunes it
  std::vector<std::string> losses;
};

double geomean(const std::vector<double>& v) {
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / double(v.size()));
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
}

// Largest |C - C_cuBLAS| over the tuner's FP32 bound for K (inputs in [-1, 1]): <= 1 agrees.
double disagreement(const Problem& p, const std::vector<float>& c, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < c.size(); ++i)
    worst = std::max(worst, std::isfinite(c[i]) ? std::fabs(double(c[i]) - want[i]) : INFINITY);
  return worst / (tuner::error_bound_unit(Precision::highest, p.K) * double(p.K));
}

}  // namespace

std::vector<cli::Shape> random_shapes(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_dim(0.0, std::log(10000.0));
  std::vector<cli::Shape> shapes;
  for (int i = 0; i < count; ++i) {
    std::int64_t d[3];
    for (auto& x : d) {
      x = std::clamp<std::int64_t>(std::llround(std::exp(log_dim(rng))), 1, 10000);
      if (i % 2 == 1 && x % 8 == 0) x += 1;  // none a multiple of 8
      if (i % 2 == 0) x = (x + 7) / 8 * 8;   // all multiples of 8
    }
    shapes.push_back({d[0], d[1], d[2]});
  }
  return shapes;
}

int run_random_sweep(const std::vector<cli::Shape>& shapes, const SweepSettings& settings) {
  const DeviceInfo& device = current_device();
  cublasHandle_t handle;
  cublas(cublasCreate(&handle), "cublasCreate");
  cublas(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");  // true FP32
  std::vector<Run> runs;
  if (settings.with_vendor) runs.push_back({"vendor on", true, {}, {}, {}, {}, {}});
  runs.push_back({"own only", false, {}, {}, {}, {}, {}});
  std::printf("%-18s %10s", "shape", "cuBLAS ms");
  for (const auto& r : runs)
    std::printf("  %-9s %-30s %7s %7s %7s %7s", r.name, "winner", "cold", "warm", "called",
                "tune s");
  std::printf("\n");
  for (const auto& [m, n, k] : shapes) {
    const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    Problem p(m, n, k, device.l2_bytes);
    std::vector<std::string> winners(runs.size());
    std::vector<std::function<void(const Set&)>> contenders = {
        [&](const Set& s) { row_major_sgemm(handle, m, n, k, s.A, s.B, s.C); }};
    // Vendor candidates first, the default: its first call is the one a new user meets, and it
    // compiles the variants the own-only run then finds compiled. Where an own kernel wins it,
    // that result serves the own-only run too (docs/cache-format.md, "Candidate sets").
    for (std::size_t i = 0; i < runs.size(); ++i) {
      Options options;
      options.vendor = runs[i].vendor;
      const auto start = std::chrono::steady_clock::now();
      winners[i] = autotune(m, n, k, options).winner;  // the first call tunes
      runs[i].first_call_s.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    for (const auto& r : runs) {
      Options options;
      options.vendor = r.vendor;
      contenders.push_back([&p, options](const Set& s) { gemm(dense_args(p, s), nullptr, options); });
    }
    const auto ms = time_ms_interleaved(p, contenders, settings.budget_ms, Inputs::rotated);
    const auto warm = time_ms_interleaved(p, contenders, settings.budget_ms, Inputs::same);
    const auto called =
        time_ms_per_call_interleaved(p, contenders, settings.budget_ms, Inputs::rotated);
    contenders[0](p.set(0));
    cuda(cudaDeviceSynchronize(), "cuBLAS");
    const auto want = p.download_c0();
    std::printf("%-18s %10.4f", shape.c_str(), ms[0]);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      contenders[i + 1](p.set(0));
      cuda(cudaDeviceSynchronize(), runs[i].name);
      const double off = disagreement(p, p.download_c0(), want);
      const double ratio = ms[0] / ms[i + 1];
      runs[i].ratios.push_back(ratio);
      runs[i].warm_ratios.push_back(warm[0] / warm[i + 1]);
      runs[i].called_ratios.push_back(called[0] / called[i + 1]);
      if (ratio < kListedBelow)
        runs[i].losses.push_back(shape + " " + std::to_string(ratio).substr(0, 5) + " (" +
                                 winners[i] + ")");
      const std::string winner = winners[i].size() > 30 ? winners[i].substr(0, 30) : winners[i];
      std::printf("  %-9s %-30s %7.3f %7.3f %7.3f %7.2f%s", "", winner.c_str(), ratio,
                  runs[i].warm_ratios.back(), runs[i].called_ratios.back(),
                  runs[i].first_call_s.back(),
                  off <= 1 ? "" : " MISMATCH");
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  cublasDestroy(handle);
  for (const auto& r : runs) {
    std::printf("summary %-9s over %zu shapes: min %.3f  p10 %.3f  median %.3f  geomean %.3f"
                "  (L2-warm: min %.3f  geomean %.3f)  first call: median %.2f s  p95 %.2f s\n",
                r.name, r.ratios.size(), quantile(r.ratios, 0.0), quantile(r.ratios, 0.1),
                quantile(r.ratios, 0.5), geomean(r.ratios), quantile(r.warm_ratios, 0.0),
                geomean(r.warm_ratios), quantile(r.first_call_s, 0.5),
                quantile(r.first_call_s, 0.95));
    const auto at_least = [&r](double ratio) {
      return std::count_if(r.ratios.begin(), r.ratios.end(), [ratio](double x) { return x >= ratio; });
    };
    std::printf("summary %-9s shapes at %.2g or more: %td of %zu  at %.2g or more: %td of %zu\n",
                r.name, kListedBelow, at_least(kListedBelow), r.ratios.size(), kAlsoCountedAt,
                at_least(kAlsoCountedAt), r.ratios.size());
    std::printf("summary %-9s calls back to back: min %.3f  p10 %.3f  median %.3f  geomean %.3f\n",
                r.name, quantile(r.called_ratios, 0.0), quantile(r.called_ratios, 0.1),
                quantile(r.called_ratios, 0.5), geomean(r.called_ratios));
    for (const auto& loss : r.losses)
      std::printf("  %s below %.2g: %s\n", r.name, kListedBelow, loss.c_str());
  }
  return tool::kSuccess;
}

}  // namespace tilemm::bench
