// tilemm-sustained-bench: each contender called back to back for --seconds on one shape, the way
// a long job calls it, with the SM clock and the board's power sampled meanwhile (NVML). Under
// sustained tensor-core load the H200 reaches its power limit and lowers its clock within tens of
// milliseconds, by as much as the kernel draws: the first launches run at the boost clock, the
// later ones at what the power limit leaves. tilemm-bench's short interleaved rounds see mostly
// the first; a training loop sees the second. This program reports both: the first 10 launches,
// and the median of 10-launch batches from the first second on, with the mean clock and power
// over the same part. Inputs are one set of buffers (random, in [-1, 1]); results are not
// checked (tilemm-bench and the tests do that).
//
// Variants are loaded once and launched through the path gemm() takes after its first call
// (detail::launch), at their own precision.
//
// Usage: tilemm-sustained-bench --help
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "bench_harness.hpp"
#include "board_sampler.hpp"
#include "cublas_check.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "tilemm/tilemm.hpp"
#include "tflops.hpp"
#include "tool_conventions.hpp"
#include "trial_family.hpp"

namespace {

using tilemm::bench::cublas;
using tilemm::bench::cuda;
using tilemm::bench::dense_args;
using tilemm::bench::Problem;
using tilemm::bench::Set;

constexpr int kBatch = 10;              // launches per batch
constexpr double kSettleSeconds = 1.0;  // what counts as "first" in the clock and power means

// One 10-launch batch: milliseconds per launch, and when it ended (seconds after `start`).
struct Batch {
  float ms;
  double ended;
};

// Batches back to back for `seconds` from `start`, each launch timed by the tuner's loop
// (bench_harness.hpp's launch_timer()).
std::vector<Batch> batches(const std::function<void()>& launch, std::chrono::steady_clock::time_point start,
                           double seconds) {
  std::vector<Batch> out;
  do {
    const std::vector<float> ms = tilemm::bench::launch_timer().time(nullptr, kBatch, [&](int) { launch(); });
    float batch_ms = 0;
    for (const float m : ms) batch_ms += m;
    const std::chrono::duration<double> ended = std::chrono::steady_clock::now() - start;
    out.push_back({batch_ms / kBatch, ended.count()});
  } while (out.back().ended < seconds);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-sustained-bench",
                            "Calls each contender back to back for seconds on one shape and reports "
                            "its first and its sustained speed, with the SM clock and board power.\n",
                            std::cout, std::cerr);
  std::string shapes = "8192x8192x8192", contender_list = "cublas_fp32,cublas_tf32";
  double seconds = 5, pause_seconds = 2;
  std::vector<std::string> trials;
  cli.app().add_option("--shapes", shapes, "M x N x K shapes (default: " + shapes + ")")->option_text("LIST");
  cli.app()
      .add_option("--contenders", contender_list,
                  "cublas_fp32 (pedantic), cublas_tf32 (TF32 tensor op) and variant names, in the "
                  "order to run (default: " + contender_list + ")")
      ->option_text("LIST");
  cli.app()
      .add_option("--seconds", seconds, "Seconds of back-to-back calls per contender (default: 5)")
      ->option_text("S")
      ->check(tilemm::tool::number_between(1.5, 600));
  cli.app()
      .add_option("--pause-seconds", pause_seconds,
                  "Idle seconds before each contender, so each starts from an idle GPU (default: 2)")
      ->option_text("S")
      ->check(tilemm::tool::number_between(0, 60));
  cli.app()
      .add_option("--trial", trials,
                  "The family's variants compiled from FILE as well, named FAMILY + \"trial\" "
                  "(multistagetrial_bm128_...), to time a template under work beside the embedded "
                  "one; repeatable")
      ->option_text("FAMILY=FILE");
  cli.set_usage("tilemm-sustained-bench [--shapes LIST] [--contenders LIST] [--seconds S] [--pause-seconds S] [--trial FAMILY=FILE]...");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-sustained-bench --contenders cublas_tf32,tf32wgmma_bm256_bn128_bk32_st4_sp1_sk1_gm1\n"
      "  tilemm-sustained-bench --shapes 4096x4096x4096 --seconds 3\n"
      "  tilemm-sustained-bench --trial multistage=work/multistage.cu --contenders \\\n"
      "      multistage_bm128_bn256_bk8_st4_v4,multistagetrial_bm128_bn256_bk8_st4_v4\n"
      "\n"
      "Columns: milliseconds per launch of the first 10 launches and the median of 10-launch\n"
      "batches after the first second (sustained), TFLOP/s sustained, mean SM clock and board power\n"
      "after the first second (NVML; '-' where it cannot be read), and the first contender's\n"
      "sustained time over this one's (above 1: faster than the first).\n"
      "\n"
      "Needs a GPU and cuBLAS; compiles the variants it runs (no tuning cache is used).\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  const std::vector<std::string> names = tilemm::bench::comma_separated(contender_list);
  if (names.empty()) return cli.usage_error("--contenders: name at least one contender");
  return cli.run([&] {
    for (const auto& trial : trials) tilemm::bench::register_trial_family(trial);
    const auto todo = tilemm::cli::parse_shapes(shapes);
    if (tilemm::device_count() == 0) throw std::runtime_error(tilemm::tool::no_device("this benchmark needs a GPU"));
    const tilemm::DeviceInfo& device = tilemm::current_device();
    // Every variant named must exist and run the shapes: checked before anything is timed.
    std::vector<std::function<void(const Problem&, const Set&)>> runs;
    cublasHandle_t fp32_handle, tf32_handle;
    cublas(cublasCreate(&fp32_handle), "cublasCreate");
    cublas(cublasSetMathMode(fp32_handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
    cublas(cublasCreate(&tf32_handle), "cublasCreate");
    cublas(cublasSetMathMode(tf32_handle, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
    for (const auto& name : names) {
      if (name == "cublas_fp32" || name == "cublas_tf32") {
        const cublasHandle_t handle = name == "cublas_fp32" ? fp32_handle : tf32_handle;
        runs.push_back([handle](const Problem& p, const Set& s) {
          tilemm::bench::row_major_sgemm(handle, p.M, p.N, p.K, s.A, s.B, s.C);
        });
        continue;
      }
      const tilemm::Variant v = tilemm::parse_variant(name);
      for (const auto& [m, n, k] : todo)
        tilemm::bench::require_runs(v, tilemm::Problem::dense(m, n, k, 4), "--contenders");
      const tilemm::detail::LoadedKernel& kernel = tilemm::detail::kernel_for(device, v);
      runs.push_back([&kernel](const Problem& p, const Set& s) {
        tilemm::detail::launch(kernel, dense_args(p, s), nullptr);  // the default stream, as the events
      });
    }
    char bus_id[32] = {};
    cuda(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device.ordinal), "cudaDeviceGetPCIBusId");

    std::printf("%-16s %-52s %9s %11s %8s %7s %7s %8s\n", "shape", "contender", "first ms",
                "sustained ms", "TFLOP/s", "SM MHz", "board W", "x first");
    for (const auto& [m, n, k] : todo) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      const Problem problem(m, n, k, 0);  // one set of buffers
      double first_sustained = 0;
      for (std::size_t c = 0; c < names.size(); ++c) {
        auto launch = [&] { runs[c](problem, problem.set(0)); };
        for (int i = 0; i < 3; ++i) launch();  // loads, instruction cache
        cuda(cudaDeviceSynchronize(), "warm-up");
        std::this_thread::sleep_for(std::chrono::duration<double>(pause_seconds));
        tilemm::bench::BoardSampler sampler(bus_id);
        const std::vector<Batch> run = batches(launch, std::chrono::steady_clock::now(), seconds);
        const auto samples = sampler.stop();
        // Sustained: the batches that ended after the first second (the last one at least).
        std::vector<float> settled;
        for (const Batch& b : run)
          if (b.ended >= kSettleSeconds) settled.push_back(b.ms);
        const double sustained = tilemm::bench::median(settled);
        if (c == 0) first_sustained = sustained;
        double mhz = 0, watts = 0;
        int counted = 0;
        for (const auto& s : samples)
          if (s.seconds >= kSettleSeconds) {
            mhz += s.sm_mhz;
            watts += s.board_watts;
            ++counted;
          }
        char clock_text[16] = "-", power_text[16] = "-";
        if (counted > 0) {
          std::snprintf(clock_text, sizeof clock_text, "%.0f", mhz / counted);
          std::snprintf(power_text, sizeof power_text, "%.0f", watts / counted);
        }
        std::printf("%-16s %-52s %9.4f %11.4f %8.1f %7s %7s %8.3f\n", shape.c_str(), names[c].c_str(),
                    run.front().ms, sustained, tilemm::detail::tflops(tilemm::Problem::dense(m, n, k, 4), sustained),
                    clock_text, power_text, first_sustained / sustained);
        if (!sampler.unavailable().empty() && c == 0)
          std::printf("  (no clock or power: %s)\n", sampler.unavailable().c_str());
        std::fflush(stdout);
      }
    }
    cublasDestroy(fp32_handle);
    cublasDestroy(tf32_handle);
    return tilemm::tool::kSuccess;
  });
}
