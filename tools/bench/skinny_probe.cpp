// tilemm-skinny-probe: the skinny families (gemvm, gemvmring: M <= 16; gemvn, gemvnring:
// N <= 16) against cuBLAS pedantic FP32 on given shapes, variant by variant, to choose their
// parameters. Each contender is timed L2-cold (inputs rotated through copies that together exceed
// the L2 several times, as tilemm-bench does) and L2-warm (one copy, launched again and again),
// and reported with the bandwidth of the bytes no kernel can avoid (A, B and C once each) and
// cuBLAS's time over its own. Every variant's C is checked against cuBLAS's within the FP32 error
// bound. It measures; it changes nothing: which parameters the families keep is decided from
// what it prints.
// --variants may name any family's variants, the tensor-core ones then run at their own precision.
//
// A variant is loaded once and then launched through the path gemm() takes after its first call
// (detail::launch on the loaded kernel), not through run_variant(), whose per-call validation
// takes more host time than a 20 us kernel runs: the GPU would idle between launches and the
// events would time the gap.
//
// Usage: tilemm-skinny-probe --help
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench_harness.hpp"
#include "cublas_check.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace {

using tilemm::bench::cublas;
using tilemm::bench::cuda;
using tilemm::bench::dense_args;
using tilemm::bench::Problem;
using tilemm::bench::Set;
using tilemm::bench::time_ms;

// The variants to time on a problem: those named (each must run it at its own precision), or
// with none named every variant of gemvm, gemvmring, gemvn and gemvnring that can.
std::vector<tilemm::Variant> contenders(const std::vector<std::string>& names,
                                        const tilemm::Problem& problem) {
  const tilemm::DeviceInfo& device = tilemm::current_device();
  std::vector<tilemm::Variant> out;
  if (!names.empty()) {
    for (const auto& name : names) {
      out.push_back(tilemm::parse_variant(name));
      tilemm::bench::require_runs(out.back(), problem, "variants");
    }
    return out;
  }
  for (const char* family : {"gemvm", "gemvmring", "gemvn", "gemvnring"})
    for (const auto& v : tilemm::variant_space(family))
      if (tilemm::can_run(v, device, problem)) out.push_back(v);
  return out;
}

// Compiles and loads `variants` on all cores before any timing, so that a probe of a few dozen
// variants takes seconds, not a minute of one-after-another NVRTC runs.
void load_in_parallel(const std::vector<tilemm::Variant>& variants) {
  const tilemm::DeviceInfo& device = tilemm::current_device();
  std::atomic<std::size_t> next{0};
  std::vector<std::string> errors(variants.size());
  auto worker = [&] {
    if (cudaSetDevice(device.ordinal) != cudaSuccess) return;
    for (std::size_t i = next++; i < variants.size(); i = next++) {
      try {
        tilemm::detail::kernel_for(device, variants[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::clamp(std::thread::hardware_concurrency(), 1u, 16u); ++t)
    pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (std::size_t i = 0; i < variants.size(); ++i)
    if (!errors[i].empty()) throw std::runtime_error(errors[i]);
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-skinny-probe",
                            "Times the skinny kernel families (gemvm, gemvmring, gemvn, "
                            "gemvnring) variant by variant against cuBLAS FP32, L2-cold and "
                            "L2-warm.\n",
                            std::cout, std::cerr);
  tilemm::bench::ShapeOptions options(cli.app(), "", 20);
  // M = 1 / N = 1 with the other two in the thousands (the bandwidth target), M or N =
  // 16, and the skinny shapes with one dimension 256.
  const std::string default_shapes =
      "1x4096x4096,4096x1x4096,1x8192x8192,8192x1x8192,16x4096x4096,4096x16x4096,16x256x4096,"
      "256x16x4096";
  std::string variant_list;
  cli.app()
      .add_option("--variants", variant_list,
                  "Comma-separated variant names to time (default: every gemvm, gemvmring, gemvn "
                  "and gemvnring variant that can run the shape)")
      ->option_text("LIST");
  cli.set_usage("tilemm-skinny-probe [--sizes LIST | --shapes LIST] [--variants LIST] [--ms-per-case MS]");
  cli.set_footer(
      "Default shapes: " + default_shapes + "\n"
      "\n"
      "Examples:\n"
      "  tilemm-skinny-probe\n"
      "  tilemm-skinny-probe --shapes 1x4096x4096 --variants gemvm_m1_c4_s8,gemvm_m1_c1_s4\n"
      "\n"
      "Columns: cold and warm median microseconds, GB/s of A + B + C read or written once, and\n"
      "cuBLAS's time over the contender's (above 1: faster than cuBLAS).\n"
      "\n"
      "Needs a GPU and cuBLAS; compiles the variants it times (no tuning cache is used).\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  if (options.shapes.empty() && options.sizes.empty()) options.shapes = default_shapes;
  const std::vector<std::string> names = tilemm::bench::comma_separated(variant_list);
  const double budget_ms = options.budget_ms;
  return cli.run([&] {
    const auto todo = options.to_run();
    const tilemm::DeviceInfo& device = tilemm::current_device();
    cublasHandle_t handle;
    cublas(cublasCreate(&handle), "cublasCreate");
    cublas(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");  // true FP32
    std::printf("%-16s %-22s %9s %8s %8s %9s %8s %8s %s\n", "shape", "contender", "cold us",
                "GB/s", "cuBL/x", "warm us", "GB/s", "cuBL/x", "vs cuBLAS");
    for (const auto& [m, n, k] : todo) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      const Problem cold(m, n, k, device.l2_bytes);
      const Problem warm(m, n, k, 0);  // one copy: every launch finds it in the L2
      const auto variants = contenders(names, tilemm::Problem::dense(m, n, k, 4));
      load_in_parallel(variants);
      const double bytes = double(m * k + k * n + m * n) * sizeof(float);
      auto run_cublas = [&](const Set& s) {
        tilemm::bench::row_major_sgemm(handle, m, n, k, s.A, s.B, s.C);
      };
      const double cublas_cold = time_ms(cold, run_cublas, budget_ms);
      const double cublas_warm = time_ms(warm, run_cublas, budget_ms);
      run_cublas(warm.set(0));
      cuda(cudaDeviceSynchronize(), "cuBLAS");
      const auto c_cublas = warm.download_c0();
      // |a|, |b| <= 1: each element's error is within twice the K-term FP32 bound of both.
      const double bound = 2.0 * double(k + 3) * std::ldexp(1.0, -24) * double(k);

      auto report = [&](const std::string& contender, double cold_ms, double warm_ms, const char* check) {
        std::printf("%-16s %-22s %9.2f %8.0f %8.3f %9.2f %8.0f %8.3f %s\n", shape.c_str(),
                    contender.c_str(), cold_ms * 1e3, bytes / (cold_ms * 1e-3) / 1e9,
                    cublas_cold / cold_ms, warm_ms * 1e3, bytes / (warm_ms * 1e-3) / 1e9,
                    cublas_warm / warm_ms, check);
        std::fflush(stdout);
      };
      report("cublas_fp32_pedantic", cublas_cold, cublas_warm, "-");
      for (const auto& v : variants) {
        const tilemm::detail::LoadedKernel& kernel = tilemm::detail::kernel_for(device, v);
        // The default stream, as time_ms's events.
        auto run = [&](const Set& s) { tilemm::detail::launch(kernel, dense_args(warm, s), nullptr); };
        const double cold_ms = time_ms(
            cold, [&](const Set& s) { tilemm::detail::launch(kernel, dense_args(cold, s), nullptr); },
            budget_ms);
        const double warm_ms = time_ms(warm, run, budget_ms);
        cuda(cudaMemset(warm.set(0).C, 0xFF, static_cast<std::size_t>(m * n) * sizeof(float)), "poison C");
        run(warm.set(0));
        cuda(cudaDeviceSynchronize(), tilemm::variant_name(v).c_str());
        const auto c = warm.download_c0();
        double worst = 0;
        for (std::size_t i = 0; i < c.size(); ++i)
          worst = std::max(worst, std::isfinite(c[i]) ? std::fabs(double(c[i]) - c_cublas[i]) : INFINITY);
        // A reduced precision's kernels are not held to the FP32 bound: their largest error is
        // printed instead (tilemm-bench compares the modes' errors).
        const std::string check =
            tilemm::precision_of(v) != tilemm::Precision::highest
                ? "max error " + std::to_string(worst) + " (" + tilemm::to_string(tilemm::precision_of(v)) + ")"
                : worst <= bound ? "ok" : "MISMATCH";
        report(tilemm::variant_name(v), cold_ms, warm_ms, check.c_str());
      }
    }
    cublasDestroy(handle);
    return tilemm::tool::kSuccess;
  });
}
