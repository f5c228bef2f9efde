// tilemm-tuning-regret: what the budgeted search costs in speed, and what a new shape's first
// gemm() costs in time. For seeded random shapes it
//   1. calls gemm() once under the default policy and budget, with the cache --budgeted-cache
//      (the first call of a new shape: the budgeted tuning, loading and the launch, host time to
//      the end of the kernel), and reads the winner back;
//   2. tunes the shape with the exhaustive search into a second cache (--exhaustive-cache), so
//      that the budgeted tunings rank only by what a real machine would have measured;
//   3. times both winners head to head on the same inputs, in the input mode the tuner times the
//      shape in (the same buffers within half the L2, else rotated through copies larger than it:
//      tuner/timing_method.hpp), in alternating blocks of launches timed by the tuner's own loop
//      (tuner/launch_timer.hpp: held, then back to back on the GPU, CUDA events around each
//      launch), median.
// Regret = budgeted winner's median / exhaustive winner's median (1 when both chose the same).
// Usage: tilemm-tuning-regret --help
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_cuda.hpp"
#include "launch_timer.hpp"
#include "tilemm/tilemm.hpp"
#include "timing_method.hpp"
#include "tool_conventions.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using tilemm::GemmArgs;
using tilemm::Options;
using tilemm::Problem;

using tilemm::bench::cuda;

struct Shape {
  std::int64_t M, N, K;
};

// Each dimension log-uniform in [1, max_dim]: as many shapes under 16 as between 512 and 8192,
// so skinny shapes come up often; no shape twice.
std::vector<Shape> draw_shapes(int count, std::uint64_t seed, std::int64_t max_dim) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_dim(0.0, std::log(double(max_dim) + 1.0));
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> seen;
  std::vector<Shape> out;
  while (static_cast<int>(out.size()) < count) {
    const auto dim = [&] {
      return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::exp(log_dim(rng))), 1, max_dim);
    };
    const Shape s{dim(), dim(), dim()};
    if (seen.insert({s.M, s.N, s.K}).second) out.push_back(s);
  }
  return out;
}

// The copies of A, B and C that the tuner's bench would time the shape on: one where it uses the
// same buffers every launch, else enough that consecutive launches read from HBM, not the L2.
struct Rotation {
  struct Set {
    float *A = nullptr, *B = nullptr, *C = nullptr;
  };
  std::vector<Set> sets;
  Shape shape;
  Rotation(const Shape& s, std::size_t l2_bytes) : shape(s) {
    const std::size_t a = std::size_t(s.M * s.K), b = std::size_t(s.K * s.N), c = std::size_t(s.M * s.N);
    const std::size_t count = tilemm::tuner::input_set_count(Problem::dense(s.M, s.N, s.K), l2_bytes);
    for (std::size_t i = 0; i < count; ++i) {
      Set set;
      cuda(cudaMalloc(reinterpret_cast<void**>(&set.A), a * sizeof(float)), "cudaMalloc A");
      cuda(cudaMalloc(reinterpret_cast<void**>(&set.B), b * sizeof(float)), "cudaMalloc B");
      cuda(cudaMalloc(reinterpret_cast<void**>(&set.C), c * sizeof(float)), "cudaMalloc C");
      cuda(cudaMemset(set.A, 0x3c, a * sizeof(float)), "cudaMemset A");  // small positive floats
      cuda(cudaMemset(set.B, 0x3c, b * sizeof(float)), "cudaMemset B");
      sets.push_back(set);
    }
  }
  ~Rotation() {
    for (auto& s : sets) {
      cudaFree(s.A);
      cudaFree(s.B);
      cudaFree(s.C);
    }
  }
  Rotation(const Rotation&) = delete;
  Rotation& operator=(const Rotation&) = delete;
  GemmArgs args(std::size_t i) const {
    const Set& s = sets[i % sets.size()];
    GemmArgs g;
    g.M = shape.M;
    g.N = shape.N;
    g.K = shape.K;
    g.A = s.A;
    g.lda = shape.K;
    g.B = s.B;
    g.ldb = shape.N;
    g.C = s.C;
    g.ldc = shape.N;
    return g;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The nearest-rank percentile.
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * double(v.size())));
  return v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1];
}

// Medians of two launchers timed in alternating blocks of 5 launches on the rotation's copies,
// for at least ~60 ms of each (at most 1000 launches each), by the tuner's own timing loop
// (tuner/launch_timer.hpp): each launch between CUDA events, the launches held and then run back
// to back, so that a kernel of a few microseconds is timed at the GPU's pace as the tuner times
// it, not at the host's.
std::pair<double, double> head_to_head(const Rotation& inputs, const std::function<void(const GemmArgs&)>& first,
                                       const std::function<void(const GemmArgs&)>& second,
                                       tilemm::tuner::LaunchTimer& timer) {
  constexpr int kBlock = 5;
  std::size_t next = 0;
  std::vector<double> a, b;
  // `rounds` rounds of (a block of first, a block of second); with `timed`, the times are kept.
  const auto run_rounds = [&](int rounds, bool timed) {
    const std::vector<float> ms = timer.time(nullptr, rounds * 2 * kBlock, [&](int i) {
      const bool of_first = (i / kBlock) % 2 == 0;
      (of_first ? first : second)(inputs.args(next++));
    });
    if (!timed) return;
    for (std::size_t i = 0; i < ms.size(); ++i) ((i / kBlock) % 2 == 0 ? a : b).push_back(ms[i]);
  };
  run_rounds(1, false);  // warm-up: clocks up, kernels loaded, caches warm
  run_rounds(2, true);   // a probe of their times, to size the run
  const double round_ms = kBlock * (median(a) + median(b));
  const int rounds = std::clamp(static_cast<int>(2.0 * 60.0 / std::max(round_ms, 1e-3)), 10, 200);
  a.clear();
  b.clear();
  run_rounds(rounds, true);
  return {median(a), median(b)};
}

struct Row {
  Shape shape;
  std::string problem_class, budgeted, exhaustive;
  double first_call_ms = 0, exhaustive_seconds = 0, budgeted_ms = 0, exhaustive_ms = 0, regret = 1;
};

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli(
      "tilemm-tuning-regret",
      "What the budgeted search costs: seeded random shapes tuned with the budget (the first "
      "gemm() of each, timed) and exhaustively, both winners timed head to head.\n",
      std::cout, std::cerr);
  int count = 30;
  long long seed = 1, max_dim = 8192;
  double budget_ms = Options::budget_from_environment();
  std::string budgeted_cache, exhaustive_cache, csv;
  cli.app().add_option("--random", count, "How many seeded random shapes (default: 30)")
      ->option_text("N")->check(tilemm::tool::integer_between(1, 10000));
  cli.app().add_option("--seed", seed, "Seed of the shapes (default: 1)")->option_text("S");
  cli.app().add_option("--max-dim", max_dim, "Largest dimension (default: 8192)")
      ->option_text("D")->check(tilemm::tool::integer_between(1, 65536));
  cli.app().add_option("--budget-ms", budget_ms, "The budgeted side's budget (default: $TILEMM_TUNE_BUDGET_MS, else 2000)")
      ->option_text("MS")->check(tilemm::tool::number_between(1, 86400000));
  cli.app().add_option("--budgeted-cache", budgeted_cache, "Cache of the budgeted tunings (required)")
      ->option_text("PATH")->required();
  cli.app().add_option("--exhaustive-cache", exhaustive_cache, "Cache of the exhaustive tunings (required)")
      ->option_text("PATH")->required();
  cli.app().add_option("--csv", csv, "Also write one row per shape to this file")->option_text("FILE");
  cli.set_usage("tilemm-tuning-regret --budgeted-cache PATH --exhaustive-cache PATH [--random N] [--seed S]\n"
                "                     [--max-dim D] [--budget-ms MS] [--csv FILE]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-tuning-regret --budgeted-cache /tmp/b.db --exhaustive-cache /tmp/e.db --random 30\n"
      "\nStore every CUBIN in both caches first, so that neither side compiles:\n"
      "  tilemm-tune --precompile --cache /tmp/b.db && cp /tmp/b.db /tmp/e.db\n"
      "\nNeeds a GPU. Targets (issue 19): median regret <= 1.01, 95th percentile <= 1.03, first "
      "call <= 2500 ms at the 95th percentile.\n\n" +
      tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  return cli.run([&] {
    if (tilemm::device_count() == 0) return cli.failure(tilemm::tool::no_device("this benchmark needs a GPU"));
    if (budgeted_cache == exhaustive_cache) return cli.usage_error("the two caches must differ");
    cuda(cudaFree(nullptr), "CUDA initialization");
    const auto& device = tilemm::current_device();
    // Two contexts, one per cache: each tunes and serves apart from the other.
    tilemm::ContextSettings budgeted_settings, exhaustive_settings;
    budgeted_settings.cache_path = budgeted_cache;
    exhaustive_settings.cache_path = exhaustive_cache;
    tilemm::Context budgeted(std::move(budgeted_settings));
    tilemm::Context exhaustive(std::move(exhaustive_settings));
    Options budgeted_options;
    budgeted_options.tune_budget_ms = budget_ms;
    Options exhaustive_options;
    exhaustive_options.tune_budget_ms = 0;

    std::vector<Row> rows;
    const auto shapes = draw_shapes(count, static_cast<std::uint64_t>(seed), max_dim);
    std::printf("seed %lld, %d shapes, budget %.0f ms, device %s\n", seed, count, budget_ms, device.name.c_str());
    std::printf("%-20s %-10s %9s %9s %9s %8s  %s | %s\n", "shape", "class", "first_ms", "exh_s", "budg_ms",
                "regret", "budgeted winner", "exhaustive winner");
    tilemm::tuner::LaunchTimer timer(device);
    for (const auto& s : shapes) {
      Row row;
      row.shape = s;
      Rotation inputs(s, device.l2_bytes);
      const GemmArgs args = inputs.args(0);
      row.problem_class = tilemm::problem_class(args.problem());
      const auto start = Clock::now();
      budgeted.gemm(args, nullptr, budgeted_options);
      cuda(cudaDeviceSynchronize(), "first gemm()");
      row.first_call_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      row.budgeted = budgeted.autotune(args.problem(), budgeted_options).winner;
      const auto ex = exhaustive.autotune(args.problem(), exhaustive_options);
      row.exhaustive = ex.winner;
      row.exhaustive_seconds = ex.tuning_seconds;
      const auto [b, e] = head_to_head(
          inputs, [&](const GemmArgs& a) { budgeted.gemm(a, nullptr, budgeted_options); },
          [&](const GemmArgs& a) { exhaustive.gemm(a, nullptr, exhaustive_options); }, timer);
      row.budgeted_ms = b;
      row.exhaustive_ms = e;
      row.regret = row.budgeted == row.exhaustive ? 1.0 : b / e;
      const std::string shape_text =
          std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
      std::printf("%-20s %-10s %9.1f %9.1f %9.4f %8.4f  %s | %s\n", shape_text.c_str(),
                  row.problem_class.c_str(), row.first_call_ms, row.exhaustive_seconds, b, row.regret,
                  row.budgeted.c_str(), row.budgeted == row.exhaustive ? "(same)" : row.exhaustive.c_str());
      std::fflush(stdout);
      rows.push_back(row);
    }
    std::vector<double> regrets, firsts;
    int same = 0;
    for (const auto& r : rows) {
      regrets.push_back(r.regret);
      firsts.push_back(r.first_call_ms);
      same += r.budgeted == r.exhaustive;
    }
    const double med = median(regrets), p95 = percentile(regrets, 0.95);
    const double first95 = percentile(firsts, 0.95);
    std::printf("\nregret (budgeted / exhaustive winner): median %.4f, 95th percentile %.4f, max %.4f; "
                "same winner for %d of %zu shapes\n",
                med, p95, *std::max_element(regrets.begin(), regrets.end()), same, rows.size());
    std::printf("first gemm() of a new shape: median %.0f ms, 95th percentile %.0f ms, max %.0f ms\n",
                median(firsts), first95, *std::max_element(firsts.begin(), firsts.end()));
    std::printf("targets: median regret <= 1.01 %s, 95th percentile <= 1.03 %s, first call p95 <= 2500 ms %s\n",
                med <= 1.01 ? "met" : "MISSED", p95 <= 1.03 ? "met" : "MISSED",
                first95 <= 2500 ? "met" : "MISSED");
    if (!csv.empty()) {
      std::ofstream f(csv);
      f << "M,N,K,class,first_call_ms,exhaustive_tuning_s,budgeted_winner,exhaustive_winner,"
           "budgeted_median_ms,exhaustive_median_ms,regret\n";
      for (const auto& r : rows)
        f << r.shape.M << ',' << r.shape.N << ',' << r.shape.K << ',' << r.problem_class << ','
          << r.first_call_ms << ',' << r.exhaustive_seconds << ',' << r.budgeted << ',' << r.exhaustive
          << ',' << r.budgeted_ms << ',' << r.exhaustive_ms << ',' << r.regret << '\n';
      if (!f) return cli.failure(tilemm::tool::cannot("write", csv, std::strerror(errno)));
    }
    return tilemm::tool::kSuccess;
  });
}
