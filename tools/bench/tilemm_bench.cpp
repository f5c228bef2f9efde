// tilemm-bench: cuBLAS SGEMM (true FP32), the best textbook tiled variant and tilemm's tuned
// winner, side by side on the same row-major problems, in one process and under one timing
// harness (CUDA events around each launch, warm-up, median of a time-based number of runs).
// cuBLAS and tilemm are timed twice: on inputs rotated through copies that together exceed the
// L2 several times (L2-cold, as a call on fresh data) and on the same inputs every launch
// (L2-warm, as a loop over one set of buffers). A shape that fits in the L2 can rank kernels
// differently in the two modes; the tuner times each shape in the mode its working set implies
// (the same inputs within half the L2, rotated above: tuner/timing_method.hpp), so a winner is
// chosen for that mode's column. With --precision, tilemm runs in
// each mode given (highest, high, medium), one row each, every row's error against a float64
// reference next to cuBLAS FP32's.
//
// Usage: tilemm-bench --help
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_harness.hpp"
#include "cublas_check.hpp"
#include "error_bound.hpp"
#include "random_sweep.hpp"
#include "tflops.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tune_cli.hpp"

namespace {

using tilemm::bench::cublas;
using tilemm::bench::cuda;
using tilemm::bench::Problem;
using tilemm::bench::Set;
using tilemm::bench::time_ms;

// Error of C against a float64 reference on a sample of rows: ||C - R||_F / ||R||_F.
struct SampledReference {
  std::vector<std::int64_t> rows;
  std::vector<double> values;  // rows.size() x N
};

SampledReference sampled_reference(const Problem& p, int count) {
  SampledReference r;
  std::mt19937_64 rng(12345);
  for (int i = 0; i < count && i < p.M; ++i)
    r.rows.push_back(count >= p.M ? i : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p.M)));
  r.values.assign(r.rows.size() * static_cast<std::size_t>(p.N), 0.0);
  auto work = [&](std::size_t begin, std::size_t end) {
    for (std::size_t t = begin; t < end; ++t) {
      double* out = &r.values[t * static_cast<std::size_t>(p.N)];
      const float* a = &p.host_a[static_cast<std::size_t>(r.rows[t] * p.K)];
      for (std::int64_t k = 0; k < p.K; ++k) {
        const double av = a[k];
        const float* b = &p.host_b[static_cast<std::size_t>(k * p.N)];
        for (std::int64_t j = 0; j < p.N; ++j) out[j] += av * b[j];
      }
    }
  };
  const std::size_t threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back(work, r.rows.size() * t / threads, r.rows.size() * (t + 1) / threads);
  for (auto& t : pool) t.join();
  return r;
}

double relative_error(const std::vector<float>& c, const SampledReference& ref, std::int64_t N) {
  double diff = 0, norm = 0;
  for (std::size_t t = 0; t < ref.rows.size(); ++t)
    for (std::int64_t j = 0; j < N; ++j) {
      const double want = ref.values[t * static_cast<std::size_t>(N) + static_cast<std::size_t>(j)];
      const double got = c[static_cast<std::size_t>(ref.rows[t] * N + j)];
      diff += (got - want) * (got - want);
      norm += want * want;
    }
  return std::isfinite(diff) ? std::sqrt(diff / std::max(norm, 1e-300)) : INFINITY;
}

struct Row {
  std::string shape, contender, variant;
  double ms, tflops, peak_pct, vs_cublas, rel_err;
  bool agrees_with_cublas;
  double err_vs_cublas = 1.0;  // rel_err / cuBLAS's rel_err: the target is <= 2
  // The same inputs every launch (L2-warm); NAN where the contender is timed rotated only.
  double ms_same = NAN, vs_cublas_same = NAN;
};

double geomean(const std::vector<double>& ratios) {
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return std::exp(log_sum / double(ratios.size()));
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-bench",
                            "tilemm's tuned winner against cuBLAS FP32 and the best textbook "
                            "tile, on this GPU (tunes shapes the cache lacks first).\n",
                            std::cout, std::cerr);
  tilemm::bench::ShapeOptions options(cli.app(), "512,1000,1024,2048,3000,4096,4097,8192", 200);
  std::string csv = "tilemm-bench.csv";
  cli.app().add_option("--csv", csv, "CSV output file (default: tilemm-bench.csv)")->option_text("FILE");
  std::vector<std::string> precision_names = {
      tilemm::to_string(tilemm::Options::precision_from_environment())};
  cli.app()
      .add_option("--precision", precision_names,
                   "tilemm's precision modes to run, e.g. highest,high,medium: one tilemm row "
                   "each (default: $TILEMM_PRECISION, else highest)")
      ->option_text("LIST")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& p) -> std::string {
            return tilemm::parse_precision(p) ? "" : "'" + p + "' is not highest, high or medium";
          },
          "MODE"));
  int random_count = 0;
  std::uint64_t seed = 1;
  bool no_vendor = false;
  cli.app()
      .add_option("--random", random_count,
                  "Instead of --sizes/--shapes: N random shapes (dimensions log-uniform in "
                  "1..10000, half not multiples of 8), each tuned on its first call and timed "
                  "against cuBLAS FP32 with vendor candidates and with own kernels only: kernels "
                  "alone, L2-cold and L2-warm, and calls back to back")
      ->option_text("N")
      ->check(tilemm::tool::number_between(1, 10000));
  cli.app().add_option("--seed", seed, "Seed of --random's shapes (default: 1)")->option_text("S");
  cli.app().add_flag("--no-vendor", no_vendor,
                     "tilemm without vendor (cuBLASLt) candidates, as TILEMM_VENDOR=off; with "
                     "--random, only the own-kernels run");
  cli.set_usage("tilemm-bench [--sizes LIST | --shapes LIST | --random N [--seed S]] "
                "[--precision LIST] [--no-vendor] [--csv FILE] [--ms-per-case MS]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-bench --sizes 1024,4096 --csv bench.csv\n"
      "  tilemm-bench --precision highest,high,medium --shapes 4096x4096x64,4096x4096x4096\n"
      "  tilemm-bench --random 48 --seed 7          a sweep: ratios, min, p10, median, geomean\n"
      "  python3 scripts/plot_bench.py bench.csv bench.png    the README's table and plot\n"
      "\n"
      "Needs a GPU and cuBLAS; uses the tuning cache the library would (TILEMM_CACHE).\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  const double budget_ms = options.budget_ms;
  std::vector<tilemm::Precision> precisions;
  for (const auto& name : precision_names) {
    const tilemm::Precision mode = *tilemm::parse_precision(name);  // checked by the option
    if (std::find(precisions.begin(), precisions.end(), mode) == precisions.end())
      precisions.push_back(mode);
  }
  // "tilemm" for highest, as before precision modes; "tilemm_high", "tilemm_medium".
  const auto contender_of = [](tilemm::Precision mode) {
    return mode == tilemm::Precision::highest ? std::string("tilemm")
                                              : std::string("tilemm_") + tilemm::to_string(mode);
  };
  return cli.run([&] {
    if (random_count > 0) {
      if (tilemm::device_count() == 0) throw std::runtime_error("no CUDA device");
      return tilemm::bench::run_random_sweep(tilemm::bench::random_shapes(random_count, seed),
                                             {!no_vendor && tilemm::Options().vendor, budget_ms});
    }
    const auto todo = options.to_run();
    const tilemm::DeviceInfo& device = tilemm::current_device();
    const double peak = device.fp32_peak_tflops();
    cublasHandle_t handle;
    cublas(cublasCreate(&handle), "cublasCreate");
    // True FP32: no TF32 or other reduced-precision shortcuts.
    cublas(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
    // With medium among the modes, cuBLAS on the TF32 tensor cores too: the speed medium aims at.
    const bool with_tf32 = std::find(precisions.begin(), precisions.end(),
                                     tilemm::Precision::medium) != precisions.end();
    cublasHandle_t tf32_handle = nullptr;
    if (with_tf32) {
      cublas(cublasCreate(&tf32_handle), "cublasCreate");
      cublas(cublasSetMathMode(tf32_handle, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
    }

    std::vector<Row> rows;
    std::map<tilemm::Precision, std::vector<double>> ratios, ratios_same;
    // medium against cuBLAS's TF32 tensor-op path, per shape: {shape, L2-cold, L2-warm}.
    std::vector<std::tuple<std::string, double, double>> medium_vs_tf32;
    using tilemm::bench::Inputs;
    for (const auto& [m, n, k] : todo) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      // The winners first: from the cache or the preloaded file, else tuned now (seconds each).
      std::fprintf(stderr, "%s: finding the winners (tuning where the cache has none)...\n",
                   shape.c_str());
      std::map<tilemm::Precision, tilemm::AutotuneResult> tuned;
      std::string sources;
      for (const tilemm::Precision mode : precisions) {
        tilemm::Options mode_options;
        mode_options.precision = mode;
        mode_options.vendor = mode_options.vendor && !no_vendor;
        tuned[mode] = tilemm::autotune(m, n, k, mode_options);
        const auto& r = tuned[mode];
        char tuned_for[48] = "";
        if (r.source == tilemm::ResultSource::tuned)
          std::snprintf(tuned_for, sizeof tuned_for, " in %.1f s", r.tuning_seconds);
        sources += std::string(sources.empty() ? "" : ", ") + tilemm::to_string(mode) + " " +
                   tilemm::to_string(r.source) + tuned_for;
      }
      std::fprintf(stderr, "%s: %s; timing...\n", shape.c_str(), sources.c_str());
      Problem p(m, n, k, device.l2_bytes);
      auto sgemm_on = [&](cublasHandle_t h, const Set& s) {
        tilemm::bench::row_major_sgemm(h, m, n, k, s.A, s.B, s.C);
      };
      auto run_cublas = [&](const Set& s) { sgemm_on(handle, s); };
      auto args_for = [&](const Set& s) { return tilemm::bench::dense_args(p, s); };
      const auto ref = sampled_reference(p, 48);

      const auto run_tf32 = [&](const Set& s) { sgemm_on(tf32_handle, s); };
      std::map<tilemm::Precision, std::function<void(const Set&)>> run_mode;
      for (const tilemm::Precision mode : precisions) {
        tilemm::Options mode_options;
        mode_options.precision = mode;
        mode_options.vendor = mode_options.vendor && !no_vendor;
        run_mode[mode] = [&args_for, mode_options](const Set& s) {
          tilemm::gemm(args_for(s), nullptr, mode_options);
        };
      }
      // cuBLAS, cuBLAS TF32 and tilemm in each mode timed in turn, round after round, in orders
      // where none always follows the same one, in both input modes (time_ms_interleaved): the
      // same clock for all of them.
      std::vector<std::function<void(const Set&)>> contenders = {run_cublas};
      if (with_tf32) contenders.push_back(run_tf32);
      for (const tilemm::Precision mode : precisions) contenders.push_back(run_mode[mode]);
      const auto cold = time_ms_interleaved(p, contenders, budget_ms, Inputs::rotated);
      const auto warm = time_ms_interleaved(p, contenders, budget_ms, Inputs::same);
      const std::size_t first_mode = with_tf32 ? 2 : 1;
      const double cublas_ms = cold[0];
      const double cublas_same_ms = warm[0];

      // cuBLAS's result is what the others are checked against.
      run_cublas(p.set(0));
      cuda(cudaDeviceSynchronize(), "cuBLAS");
      const auto c_cublas = p.download_c0();
      const double cublas_err = relative_error(c_cublas, ref, n);

      // Best textbook tile: every tiled variant timed, the fastest reported.
      std::string best_tiled;
      double best_tiled_ms = INFINITY;
      for (const auto& v : tilemm::variant_space("tiled")) {
        const double ms = time_ms(p, [&](const Set& s) { tilemm::run_variant(v, args_for(s)); }, budget_ms / 4);
        if (ms < best_tiled_ms) {
          best_tiled_ms = ms;
          best_tiled = tilemm::variant_name(v);
        }
      }
      const tilemm::Variant tiled = tilemm::parse_variant(best_tiled);
      const double tiled_ms = time_ms(p, [&](const Set& s) { tilemm::run_variant(tiled, args_for(s)); }, budget_ms);

      auto check = [&](const std::string& contender, const std::string& variant, double ms,
                       const std::function<void(const Set&)>& run,
                       tilemm::Precision mode = tilemm::Precision::highest) {
        cuda(cudaMemset(p.set(0).C, 0xFF, static_cast<std::size_t>(m * n) * sizeof(float)), "poison C");
        run(p.set(0));
        cuda(cudaDeviceSynchronize(), contender.c_str());
        const auto c = p.download_c0();
        double worst = 0;  // largest difference to cuBLAS, relative to the K-scaled FP32 bound
        for (std::size_t i = 0; i < c.size(); ++i) worst = std::max(worst, std::isfinite(c[i]) ? std::fabs(double(c[i]) - c_cublas[i]) : INFINITY);
        // The tuner's bound for the mode (|a|, |b| <= 1: an element of |A| |B| is at most k).
        const double bound = tilemm::tuner::error_bound_unit(mode, k) * double(k);
        const double tf = tilemm::detail::tflops(tilemm::Problem::dense(m, n, k, 4), ms);
        rows.push_back({shape, contender, variant, ms, tf, 100 * tf / peak, cublas_ms / ms,
                        relative_error(c, ref, n), worst <= bound, 1.0});
      };
      check("cublas_fp32", "cublasSgemm pedantic", cublas_ms, run_cublas);
      rows.back().ms_same = cublas_same_ms;
      rows.back().vs_cublas_same = 1.0;
      check("best_tiled", best_tiled, tiled_ms, [&](const Set& s) { tilemm::run_variant(tiled, args_for(s)); });
      if (with_tf32) {
        check("cublas_tf32", "cublasSgemm TF32 tensor op", cold[1], run_tf32,
              tilemm::Precision::medium);
        rows.back().ms_same = warm[1];
        rows.back().vs_cublas_same = cublas_same_ms / warm[1];
      }
      for (std::size_t i = 0; i < precisions.size(); ++i) {
        const tilemm::Precision mode = precisions[i];
        const double tilemm_ms = cold[first_mode + i];
        const double tilemm_same_ms = warm[first_mode + i];
        check(contender_of(mode), tuned[mode].winner, tilemm_ms, run_mode[mode], mode);
        rows.back().ms_same = tilemm_same_ms;
        rows.back().vs_cublas_same = cublas_same_ms / tilemm_same_ms;
        ratios[mode].push_back(cublas_ms / tilemm_ms);
        ratios_same[mode].push_back(cublas_same_ms / tilemm_same_ms);
        if (with_tf32 && mode == tilemm::Precision::medium)
          medium_vs_tf32.emplace_back(shape, cold[1] / tilemm_ms, warm[1] / tilemm_same_ms);
      }
      const std::size_t shape_rows = 2 + (with_tf32 ? 1 : 0) + precisions.size();
      for (auto it = rows.end() - static_cast<std::ptrdiff_t>(shape_rows); it != rows.end(); ++it)
        it->err_vs_cublas = it->rel_err / cublas_err;
    }
    cublasDestroy(handle);
    if (tf32_handle != nullptr) cublasDestroy(tf32_handle);

    std::ofstream out(csv);
    out << "shape,contender,variant,median_ms,tflops,peak_pct,cublas_over_this,rel_err_fp64,err_over_cublas_err,agrees_with_cublas,median_ms_same_inputs,cublas_over_this_same_inputs\n";
    std::printf("%-16s %-12s %-48s %10s %8s %7s %9s %10s %9s %9s %8s %s\n", "shape", "contender",
                "variant", "median ms", "TFLOP/s", "% peak", "cuBLAS/x", "same: ms", "cuBLAS/x",
                "rel err", "err/cuBL", "vs cuBLAS");
    for (const auto& r : rows) {
      out << r.shape << "," << r.contender << "," << r.variant << "," << r.ms << "," << r.tflops << ","
          << r.peak_pct << "," << r.vs_cublas << "," << r.rel_err << "," << r.err_vs_cublas << ","
          << (r.agrees_with_cublas ? "yes" : "no") << ",";
      if (!std::isnan(r.ms_same)) out << r.ms_same << "," << r.vs_cublas_same;
      else out << ",";
      out << "\n";
      std::printf("%-16s %-12s %-48s %10.4f %8.2f %6.1f%% %9.3f %10.4f %9.3f %9.2e %8.2f %s\n",
                  r.shape.c_str(), r.contender.c_str(), r.variant.c_str(), r.ms, r.tflops,
                  r.peak_pct, r.vs_cublas, r.ms_same, r.vs_cublas_same, r.rel_err,
                  r.err_vs_cublas, r.agrees_with_cublas ? "ok" : "MISMATCH");
    }
    for (const tilemm::Precision mode : precisions)
      std::printf("geomean cuBLAS time / %s time over %zu shapes: %.3f rotated inputs (L2-cold), "
                  "%.3f same inputs (L2-warm)\n",
                  contender_of(mode).c_str(), ratios[mode].size(), geomean(ratios[mode]),
                  geomean(ratios_same[mode]));
    if (!medium_vs_tf32.empty()) {
      std::printf("cuBLAS TF32 time / tilemm_medium time (L2-cold, L2-warm):");
      for (const auto& [shape, cold_ratio, warm_ratio] : medium_vs_tf32)
        std::printf("  %s %.3f %.3f", shape.c_str(), cold_ratio, warm_ratio);
      std::printf("\n");
    }
    return tilemm::tool::kSuccess;
  });
}
