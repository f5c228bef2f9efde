// The budgeted search's cheap pruning rules (tuner/pruning_rules.hpp) checked against the
// exhaustive search on the GPU: over a sweep of shapes from the distribution a new user meets
// (each dimension log-uniform in 1..10000, every other shape with no dimension a multiple of 8),
// no candidate a rule prunes may be faster than the best candidate the rules keep. Skips without
// a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gpu_bench.hpp"
#include "gpu_test_support.hpp"
#include "pruning_rules.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

// A pruned candidate may be up to this much faster than the best one the rules keep before the
// test fails. Timings of kernels of a few microseconds move by a few percent from one run to the
// next even back to back (docs/tuning.md, "Timing"), and a rule that costs a budgeted search
// under a tenth of the kernel's time is worth its saving; a rule that hides a kernel faster by
// more than that is the loss the issue reports (a 10x slower kernel kept), and must be fixed.
constexpr double kTolerance = 0.10;

// The sweep: kRandomShapes drawn from kSeed, each with at most kMostFmas multiply-adds, so that
// timing every candidate that can run takes a second or two a shape. With the compilation of the
// space (once per process, on every host thread) the whole test stays near a minute on an H200.
constexpr int kRandomShapes = 10;
constexpr std::uint64_t kSeed = 20260044;
constexpr double kMostFmas = 5e8;

// The distribution (tools/bench/random_sweep.cpp): the odd-numbered shapes have no
// dimension that is a multiple of 8, the others are rounded up to multiples of 8.
std::vector<Problem> random_shapes() {
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> log_dim(0.0, std::log(10000.0));
  std::vector<Problem> shapes;
  for (int i = 0; static_cast<int>(shapes.size()) < kRandomShapes; ++i) {
    std::int64_t d[3];
    for (auto& x : d) {
      x = std::clamp<std::int64_t>(std::llround(std::exp(log_dim(rng))), 1, 10000);
      if (i % 2 == 1 && x % 8 == 0) x += 1;
      if (i % 2 == 0) x = (x + 7) / 8 * 8;
    }
    if (double(d[0]) * double(d[1]) * double(d[2]) <= kMostFmas)
      shapes.push_back(Problem::dense(d[0], d[1], d[2]));
  }
  return shapes;
}

// Shapes of the classes the issue found slow: small outputs with long K, one of them tiny with
// K near 100000 and an odd leading dimension (where underfill pruning left one slow kernel), and
// a mid shape with short K. Dense: an odd K or N makes the class alignment 1.
std::vector<Problem> chosen_shapes() {
  return {Problem::dense(7, 13, 99999), Problem::dense(4, 32, 10016), Problem::dense(88, 24, 5367),
          Problem::dense(20, 789, 8586), Problem::dense(376, 116, 4207),
          Problem::dense(566, 528, 138)};
}

// The sweep times each candidate for about 2 ms of launches (at least 10) rather than the
// standard 30: a few hundred candidates a shape. A suspected violation is timed again with
// kConfirmPlan before it fails the test.
TimingPlan sweep_plan() {
  TimingPlan plan;
  plan.warmup = 2;
  plan.probe = 3;
  plan.min_samples = 10;
  plan.max_samples = 100;
  plan.target_ms = 2.0;
  return plan;
}
TimingPlan confirm_plan() {
  TimingPlan plan;
  plan.warmup = 3;
  plan.probe = 3;
  plan.min_samples = 30;
  plan.max_samples = 400;
  plan.target_ms = 15.0;
  return plan;
}

// The GPU's bench with the sweep's plan.
class SweepBench : public CandidateBench {
 public:
  explicit SweepBench(GpuBench& gpu) : gpu_(gpu) {}
  CheckResult verify(const Variant& v, const detail::CompiledVariant& compiled) override {
    return gpu_.verify(v, compiled);
  }
  TimingResult time(const Variant& v, double give_up_ms) override {
    return gpu_.time_with(v, sweep_plan(), give_up_ms);
  }
  TimingPlan timing_plan() const override { return sweep_plan(); }
  TimingResult time_with(const Variant& v, const TimingPlan& plan, double give_up_ms) override {
    return gpu_.time_with(v, plan, give_up_ms);
  }
  CheckResult verify_plan(const RowSplitPlan& plan) override { return gpu_.verify_plan(plan); }
  TimingResult time_plan(const RowSplitPlan& plan, double give_up_ms) override {
    return gpu_.time_plan(plan, give_up_ms);
  }

 private:
  GpuBench& gpu_;
};

std::string shape_text(const Problem& p) {
  return std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) +
         " (alignment " + std::to_string(p.alignment) + ")";
}

// The medians of `a` and `b` timed again in alternating order (a b b a), each the mean of its two
// passes' medians: a second, longer look at a suspected violation.
std::pair<double, double> time_again(GpuBench& gpu, const Variant& a, const Variant& b) {
  const double inf = std::numeric_limits<double>::infinity();
  const TimingPlan plan = confirm_plan();
  double ta = gpu.time_with(a, plan, inf).stats.median_ms;
  double tb = gpu.time_with(b, plan, inf).stats.median_ms;
  tb += gpu.time_with(b, plan, inf).stats.median_ms;
  ta += gpu.time_with(a, plan, inf).stats.median_ms;
  return {ta / 2, tb / 2};
}

struct ShapeReport {
  int timed = 0;
  int pruned_by_rules = 0;
  std::string best_kept, best_pruned, rule;
  double best_kept_ms = std::numeric_limits<double>::infinity();
  double best_pruned_ms = std::numeric_limits<double>::infinity();
  double seconds = 0.0;
};

// Tunes `problem` exhaustively, then checks the cheap rules against what it measured.
ShapeReport check_shape(const DeviceInfo& device, const Problem& problem) {
  const auto start = std::chrono::steady_clock::now();
  ShapeReport report;
  GpuBench gpu(device, problem);
  SweepBench bench(gpu);
  TuneSettings settings;
  settings.budget_ms = 0;  // exhaustive: every candidate that can run is verified and timed
  settings.providers = std::vector<detail::CandidateProvider*>{};  // the rules see variants only
  const TuneOutcome out = tune(device, problem, bench, settings);

  // The rules over the candidates a budgeted search would start from: every variant of the space
  // that can run the problem.
  std::vector<Variant> runnable;
  for (const auto& v : variant_space(problem.precision))
    if (can_run(v, device, problem)) runnable.push_back(v);
  const CheapPruningRules rules(device, problem, runnable);

  std::map<std::string, Pruning> pruned;  // the correct candidates a rule prunes
  for (const auto& c : out.candidates) {
    EXPECT_NE(c.status, CandidateStatus::pruned)
        << shape_text(problem) << ": the exhaustive search pruned " << c.variant << ": " << c.reason;
    if (c.status != CandidateStatus::ok) continue;
    ++report.timed;
    const auto verdict = rules.verdict(parse_variant(c.variant));
    if (verdict) {
      ++report.pruned_by_rules;
      pruned.emplace(c.variant, *verdict);
      if (c.stats.median_ms < report.best_pruned_ms) {
        report.best_pruned_ms = c.stats.median_ms;
        report.best_pruned = c.variant;
        report.rule = to_string(verdict->rule);
      }
    } else if (c.stats.median_ms < report.best_kept_ms) {
      report.best_kept_ms = c.stats.median_ms;
      report.best_kept = c.variant;
    }
  }
  if (report.best_kept.empty()) {
    ADD_FAILURE() << shape_text(problem) << ": the rules keep no correct candidate; the fastest "
                  << "they prune is " << report.best_pruned << " (" << report.rule << ", "
                  << report.best_pruned_ms << " ms)";
  } else {
    for (const auto& c : out.candidates) {
      const auto it = pruned.find(c.variant);
      if (it == pruned.end() || c.stats.median_ms * (1 + kTolerance) >= report.best_kept_ms)
        continue;
      // Suspected: a second, longer look at the two before the test fails.
      const auto [pruned_ms, kept_ms] =
          time_again(gpu, parse_variant(c.variant), parse_variant(report.best_kept));
      EXPECT_GE(pruned_ms * (1 + kTolerance), kept_ms)
          << shape_text(problem) << ": the " << to_string(it->second.rule) << " rule prunes "
          << c.variant << " (" << it->second.reason << "), which runs in " << pruned_ms
          << " ms (" << c.stats.median_ms << " ms in the sweep), faster than the best candidate "
          << "the rules keep, " << report.best_kept << ", in " << kept_ms << " ms ("
          << report.best_kept_ms << " ms in the sweep)";
    }
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

TEST(PruningRulesAgainstExhaustive, NoRulePrunesACandidateFasterThanTheBestOneTheyKeep) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  std::vector<Problem> shapes = chosen_shapes();
  for (const auto& p : random_shapes()) shapes.push_back(p);
  std::printf("%-26s %6s %6s  %-52s %10s  %-52s %-12s %10s %7s\n", "shape", "timed", "ruled",
              "best kept", "ms", "best pruned", "rule", "ms", "s");
  double total = 0.0;
  for (const auto& problem : shapes) {
    const ShapeReport r = check_shape(device, problem);
    total += r.seconds;
    std::printf("%-26s %6d %6d  %-52s %10.4f  %-52s %-12s %10.4f %7.1f\n",
                shape_text(problem).c_str(), r.timed, r.pruned_by_rules, r.best_kept.c_str(),
                r.best_kept_ms, r.best_pruned.empty() ? "-" : r.best_pruned.c_str(),
                r.rule.empty() ? "-" : r.rule.c_str(), r.best_pruned_ms, r.seconds);
    std::fflush(stdout);
  }
  std::printf("%zu shapes in %.1f s\n", shapes.size(), total);
}

}  // namespace
}  // namespace tilemm::tuner
