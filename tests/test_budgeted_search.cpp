// The budgeted search (tuner/budgeted_search.hpp) with the fake bench: which candidates it times,
// how successive halving narrows them, and how it stops at the budget. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "budgeted_search.hpp"
#include "fake_bench.hpp"
#include "family_registry.hpp"
#include "gpu_bench.hpp"
#include "row_split_candidates.hpp"
#include "synthetic_device.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

using testing::FakeBench;

const Problem kSquare = Problem::square(2048);

// Every warptile variant that can run kSquare, each with its own scripted median: the i-th
// takes 1 + i / 100 ms, except `fastest`, which takes 0.5 ms.
struct Scripted {
  std::vector<Variant> space;
  std::map<std::string, double> median;
  std::string fastest;
  explicit Scripted(std::size_t fastest_index) {
    for (const auto& v : variant_space())
      if (v.family == "warptile" && can_run(v, testing::synthetic_h200(), kSquare)) space.push_back(v);
    for (std::size_t i = 0; i < space.size(); ++i)
      median[variant_name(space[i])] = 1.0 + 0.01 * double(i);
    fastest = variant_name(space.at(fastest_index));
    median[fastest] = 0.5;
  }
  // A measured shape that knows every median exactly (the same shape, measured before).
  MeasuredShape exact_history() const { return {kSquare.M, kSquare.N, kSquare.K, median}; }
};

// The clock is the fake bench's (it advances by the launches timed), or stopped: then the budget
// only sizes the selection and never runs out.
TuneSettings budgeted(const Scripted& s, FakeBench& bench, double budget_ms, bool clock_runs = true) {
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.compile_threads = 1;
  settings.space = s.space;
  settings.budget_ms = budget_ms;
  if (clock_runs)
    settings.now_ms = [&bench] { return bench.clock_ms; };
  else
    settings.now_ms = [] { return 0.0; };
  return settings;
}

// With exact history the best-ranked predicts 0.5 ms: a 500 ms budget selects fewer than the space.
constexpr double kSizingBudgetMs = 500;
std::size_t sized_selection() { return std::size_t(candidates_within_budget(kSizingBudgetMs, 0.5)); }

std::size_t count_status(const TuneOutcome& out, CandidateStatus status, const std::string& reason_part) {
  return static_cast<std::size_t>(std::count_if(out.candidates.begin(), out.candidates.end(), [&](const CandidateResult& c) {
    return c.status == status && c.reason.find(reason_part) != std::string::npos;
  }));
}

std::set<std::string> screened(const FakeBench& bench) {
  std::set<std::string> names;
  for (const auto& [name, plan] : bench.timed_with)
    if (plan.target_ms == kScreeningTargetMs) names.insert(name);
  return names;
}

TEST(BudgetedSearch, TheSelectionGrowsWithTheBudgetAndShrinksWithTheLaunchTime) {
  EXPECT_EQ(candidates_within_budget(20000, 0.01), kMostSelected);
  EXPECT_EQ(candidates_within_budget(2000, 1000), kFewestSelected);
  // 10 ms of overhead and 8 launches of 23 ms each: 194 ms per candidate.
  EXPECT_EQ(candidates_within_budget(2000, 23), 10);
  EXPECT_LT(candidates_within_budget(2000, 20), candidates_within_budget(2000, 5));
}

TEST(BudgetedSearch, ARankingFromMeasuredShapesFindsTheWinnerTimingOnlyTheSelection) {
  const Scripted s(40);
  ASSERT_GT(s.space.size(), sized_selection());
  FakeBench bench;
  bench.median = s.median;
  TuneSettings settings = budgeted(s, bench, kSizingBudgetMs, false);
  settings.history = {s.exact_history()};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_EQ(out.winner, s.fastest);
  // Only the selection was verified and timed; everything else says why it was not.
  const auto timed = screened(bench);
  EXPECT_EQ(timed.size(), sized_selection());
  EXPECT_TRUE(timed.count(s.fastest));
  const std::size_t not_selected =
      count_status(out, CandidateStatus::pruned, "not selected by the budgeted search: ranked ");
  EXPECT_GT(not_selected, 0u);
  EXPECT_EQ(not_selected + timed.size(),
            s.space.size() - count_status(out, CandidateStatus::pruned, "fill under a quarter"));
  // Successive halving leaves two for the final round; the others were dropped with their times.
  EXPECT_EQ(count_status(out, CandidateStatus::ok, ""), 2u);
  EXPECT_GT(count_status(out, CandidateStatus::pruned, "dropped after the screening of the budgeted search"), 0u);
}

TEST(BudgetedSearch, AReducedPrecisionsOwnKernelsAreAlwaysScreenedBesideTheFp32Ones) {
  // A high problem's space is its tensor-core kernels and the FP32 ones. A history that knows
  // only the FP32 kernels (and would rank every one of them first) must not crowd the tensor-core
  // kernels out of the selection, nor a budget spent on FP32 kernels out of the screening: they
  // are what the caller asked for.
  const Scripted s(40);
  Problem high = kSquare;
  high.precision = Precision::high;
  std::vector<Variant> own;
  // (Those whose family's hint prunes them here aside: tf32wgmmapad's copies, on an aligned problem.)
  for (const auto& v : variant_space(Precision::high))
    if (can_run(v, testing::synthetic_h200(), high) &&
        detail::find_family(v.family).pruning_hint(v, testing::synthetic_h200(), high).empty())
      own.push_back(v);
  ASSERT_FALSE(own.empty());
  FakeBench bench;
  bench.median = s.median;
  for (const auto& v : own) bench.median[variant_name(v)] = 0.8;
  TuneSettings settings = budgeted(s, bench, kSizingBudgetMs, false);
  settings.space.insert(settings.space.end(), own.begin(), own.end());
  settings.history = {s.exact_history()};
  ASSERT_GT(s.space.size(), sized_selection());
  const auto out = tune(testing::synthetic_h200(), high, bench, settings);
  const auto timed = screened(bench);
  for (const auto& v : own) EXPECT_TRUE(timed.count(variant_name(v))) << variant_name(v);
  // The selection the budget sizes still goes by the ranking (some of it may be own kernels),
  // and the fastest of all wins.
  EXPECT_GE(timed.size(), sized_selection());
  EXPECT_LE(timed.size(), sized_selection() + own.size());
  EXPECT_EQ(out.winner, s.fastest);

  // With a budget that runs out during the screening, they were screened first.
  FakeBench short_bench;
  short_bench.median = bench.median;
  TuneSettings tight = budgeted(s, short_bench, 200);
  tight.space = settings.space;
  tight.history = settings.history;
  tune(testing::synthetic_h200(), high, short_bench, tight);
  const auto timed_in_time = screened(short_bench);
  ASSERT_LT(timed_in_time.size(), sized_selection());
  for (const auto& v : own) EXPECT_TRUE(timed_in_time.count(variant_name(v))) << variant_name(v);
}

// The first skinny shape a device meets, 1 x 4096 x 4096: every FP32 variant that can run it, a
// history (the same shape, measured exactly) that knows every family but gemvm, which then ranks
// last, and scripted medians: `gemvm_ms` for each gemvm variant, 0.06 ms and up for the others.
struct FirstSkinnyShape {
  const Problem problem = Problem::dense(1, 4096, 4096, 4);
  std::vector<Variant> space;
  MeasuredShape history{problem.M, problem.N, problem.K, {}};
  std::map<std::string, double> median;

  explicit FirstSkinnyShape(double gemvm_ms) {
    for (const auto& v : variant_space(Precision::highest))
      if (can_run(v, testing::synthetic_h200(), problem)) space.push_back(v);
    for (std::size_t i = 0; i < space.size(); ++i) {
      const std::string name = variant_name(space[i]);
      median[name] = space[i].family == "gemvm" ? gemvm_ms : 0.06 + 0.001 * double(i);
      if (space[i].family != "gemvm") history.median_ms[name] = median[name];
    }
  }
  std::vector<RankedCandidate> ranked(const std::vector<Variant>& variants) const {
    return rank_candidates_by_history(variants, problem, 132, {history});
  }
  // A budgeted tuning in which compiling takes `compile_ms` a candidate on the bench's clock, as
  // NVRTC does on a device's first tuning: its outcome and the candidates it screened.
  std::pair<TuneOutcome, std::set<std::string>> tuned(double compile_ms, double budget_ms) const {
    FakeBench bench;
    bench.median = median;
    TuneSettings settings;
    settings.compile = [&bench, compile_ms](const Variant& v, const std::string& arch) {
      bench.clock_ms += compile_ms;
      return testing::fake_compile(v, arch);
    };
    settings.compile_threads = 1;
    settings.space = space;
    settings.budget_ms = budget_ms;
    settings.now_ms = [&bench] { return bench.clock_ms; };
    settings.history = {history};
    auto out = tune(testing::synthetic_h200(), problem, bench, settings);
    return {std::move(out), screened(bench)};
  }
};

// A budget that runs out while the screening compiles and times the measured families must still
// give the best-ranked candidate of each unmeasured family one look. Here that look finds the
// winner; in ranking order alone (the search before this rule) no GEMV kernel was timed, and the
// H200 ran 1 x 4096 x 4096 on a splitk kernel 3x slower than cuBLAS.
TEST(BudgetedSearch, TheBestRankedOfEachFamilyNothingMeasuredIsScreenedBeforeTheBudgetRunsOut) {
  const FirstSkinnyShape shape(0.03);
  std::set<std::string> unmeasured_families;
  for (const auto& v : shape.space)
    if (!shape.history.median_ms.count(variant_name(v))) unmeasured_families.insert(v.family);
  ASSERT_EQ(unmeasured_families, std::set<std::string>{"gemvm"});  // gemvn needs N <= 16

  // The budget sizes a selection of most of the space (the launches are short) but runs out
  // while the screening compiles it.
  const auto [out, timed] = shape.tuned(50, 2000);
  ASSERT_GT(static_cast<std::size_t>(candidates_within_budget(2000, 0.06)), 2 * timed.size())
      << "the budget runs out during the screening";

  const auto ranked = shape.ranked(shape.space);
  const auto leaders = leaders_of_unmeasured_families(ranked);
  ASSERT_EQ(leaders.size(), 1u);
  const std::string leader = *leaders.begin();
  EXPECT_EQ(parse_variant(leader).family, "gemvm");
  // It is gemvm's best-ranked: no gemvm candidate ranks before it.
  for (const auto& r : ranked) {
    if (r.variant.family != "gemvm") continue;
    EXPECT_EQ(variant_name(r.variant), leader);
    break;
  }
  EXPECT_TRUE(timed.count(leader));
  EXPECT_EQ(parse_variant(out.winner).family, "gemvm");
  // The families the history measured have no leader of their own.
  std::vector<Variant> measured;
  for (const auto& v : shape.space)
    if (v.family != "gemvm") measured.push_back(v);
  EXPECT_TRUE(leaders_of_unmeasured_families(shape.ranked(measured)).empty());
}

// The same first skinny shape, where the family's look is not its fastest variant: once the look
// is the fastest so far, the family's other candidates (ranked last, like it) are screened next,
// and the fastest of them wins within the budget. In ranking order alone they came after every
// measured candidate and the budget ran out first, so a first tuning of a skinny shape kept the
// family's look where another variant of the family was much faster.
TEST(BudgetedSearch, WhenAnUnmeasuredFamilysLookLeadsItsOtherCandidatesAreScreenedNext) {
  FirstSkinnyShape shape(0.04);
  // The gemvm candidates the search times at all (rules prune some before it), from a budget that
  // never runs out.
  const auto [unhurried, all_screened] = shape.tuned(0.0, 1e9);
  const auto ranked = shape.ranked(shape.space);
  const auto leaders = leaders_of_unmeasured_families(ranked);
  ASSERT_EQ(leaders.size(), 1u);
  const std::string look = *leaders.begin();
  std::vector<std::string> gemvm;  // in ranking order
  for (const auto& r : ranked)
    if (r.variant.family == "gemvm" && all_screened.count(variant_name(r.variant)))
      gemvm.push_back(variant_name(r.variant));
  ASSERT_GE(gemvm.size(), 3u);
  ASSERT_EQ(gemvm.front(), look);
  // The family's last-ranked is its fastest; the look is faster than every measured candidate.
  const std::string fastest = gemvm.back();
  shape.median[look] = 0.03;
  shape.median[fastest] = 0.02;

  const auto [out, timed] = shape.tuned(50.0, 2000);
  ASSERT_LT(timed.size(), all_screened.size() / 2) << "the budget runs out during the screening";
  for (const auto& name : gemvm) EXPECT_TRUE(timed.count(name)) << name;
  EXPECT_EQ(out.winner, fastest);
}

TEST(BudgetedSearch, RoundsTimeFewerCandidatesWithMoreLaunchesEachAndEndWithTheFullPlan) {
  const Scripted s(3);
  FakeBench bench;
  bench.median = s.median;
  TuneSettings settings = budgeted(s, bench, kSizingBudgetMs, false);
  settings.history = {s.exact_history()};
  tune(testing::synthetic_h200(), kSquare, bench, settings);
  // The first timings screen the selection.
  ASSERT_GT(bench.timed_with.size(), sized_selection());
  for (std::size_t i = 0; i < sized_selection(); ++i)
    EXPECT_EQ(bench.timed_with[i].second.target_ms, kScreeningTargetMs) << i;
  // Each later round times at most half of the previous one's candidates (rounded up), with a
  // longer target, until the final two (whose round is kFinalPasses timings each: below).
  const std::size_t final_timings = 2 * kFinalPasses;
  ASSERT_GT(bench.timed_with.size(), sized_selection() + final_timings);
  std::map<std::string, int> times;
  for (std::size_t i = 0; i + final_timings < bench.timed_with.size(); ++i)
    ++times[bench.timed_with[i].first];
  for (std::size_t i = bench.timed_with.size() - 2; i < bench.timed_with.size(); ++i)
    ++times[bench.timed_with[i].first];  // the final round, once
  int most = 0;
  for (const auto& [name, n] : times) most = std::max(most, n);
  ASSERT_GE(most, 3);
  std::size_t previous = sized_selection();
  for (int k = 2; k <= most; ++k) {
    const auto at_least = static_cast<std::size_t>(std::count_if(
        times.begin(), times.end(), [k](const auto& t) { return t.second >= k; }));
    EXPECT_LE(at_least, (previous + 1) / 2) << "timed " << k << " times";
    previous = at_least;
  }
  EXPECT_EQ(previous, 2u);
  // The final round: the full plan shared out over kFinalPasses passes of the final two, their
  // order reversed every other pass (A B B A A B B A).
  double target = 0.0;
  for (std::size_t i = sized_selection(); i + final_timings < bench.timed_with.size(); ++i) {
    EXPECT_GE(bench.timed_with[i].second.target_ms, target);
    target = bench.timed_with[i].second.target_ms;
  }
  const TimingPlan full = standard_timing_plan();
  const std::size_t first = bench.timed_with.size() - final_timings;
  const std::string a = bench.timed_with[first].first, b = bench.timed_with[first + 1].first;
  EXPECT_NE(a, b);
  double target_sum_a = 0.0;
  int min_samples_a = 0;
  for (int pass = 0; pass < kFinalPasses; ++pass) {
    const auto& one = bench.timed_with[first + 2 * static_cast<std::size_t>(pass)];
    const auto& two = bench.timed_with[first + 2 * static_cast<std::size_t>(pass) + 1];
    EXPECT_EQ(one.first, pass % 2 == 0 ? a : b) << pass;
    EXPECT_EQ(two.first, pass % 2 == 0 ? b : a) << pass;
    const auto& plan_a = pass % 2 == 0 ? one.second : two.second;
    target_sum_a += plan_a.target_ms;
    min_samples_a += plan_a.min_samples;
  }
  EXPECT_DOUBLE_EQ(target_sum_a, full.target_ms);
  EXPECT_GE(min_samples_a, full.min_samples);
}

// Under a power limit the clock falls with sustained load: timed one after the other, the first of
// the final two would look faster than it is. Alternating passes rank them as they are.
TEST(BudgetedSearch, TheFinalTwoAreRankedFairlyOnAGpuThatSlowsWithLoad) {
  const Scripted s(0);
  const std::string slower = variant_name(s.space[1]), faster = variant_name(s.space[2]);
  FakeBench bench;
  bench.median = {{slower, 2.04}, {faster, 2.0}};
  bench.slowdown_per_call = 0.05;  // 5% per timing: more than the 2% between them
  TuneSettings settings = budgeted(s, bench, kSizingBudgetMs, false);
  settings.space = {s.space[1], s.space[2]};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  // Screened slower first: it leads into the final round, where it is timed first.
  ASSERT_EQ(bench.timed_with.front().first, slower);
  EXPECT_EQ(out.winner, faster);
  // One pass each (the quick plan) would have kept the order's verdict.
  FakeBench quick;
  quick.median = bench.median;
  quick.slowdown_per_call = bench.slowdown_per_call;
  quick.timing = quick_timing_plan();
  TuneSettings quick_settings = budgeted(s, quick, kSizingBudgetMs, false);
  quick_settings.space = settings.space;
  EXPECT_EQ(tune(testing::synthetic_h200(), kSquare, quick, quick_settings).winner, slower);
}

TEST(BudgetedSearch, WhenTheBudgetRunsOutTheBestScreenedCandidateWins) {
  const Scripted s(2);
  FakeBench bench;
  for (const auto& [name, ms] : s.median) bench.median[name] = 100 * ms;  // 50-300 ms launches
  TuneSettings settings = budgeted(s, bench, 300);
  settings.history = {s.exact_history()};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  // Four candidates at least, even though the first alone spends the budget; no round after.
  EXPECT_EQ(screened(bench).size(), std::size_t(kFewestSelected));
  EXPECT_EQ(bench.timed_with.size(), std::size_t(kFewestSelected));
  EXPECT_EQ(out.winner, s.fastest);
  // The screening's better half stays in the running, ranked by the screening's times.
  EXPECT_EQ(count_status(out, CandidateStatus::ok, ""), std::size_t(kFewestSelected) / 2);
}

// A budget the screening spends leaves no time for the rounds: the best two still meet in a final
// round of alternating passes (past the deadline: its least costs less than kFinalRoundPastBudget
// of the budget), and on a GPU that slows with load the faster one wins, though the screening
// timed it a call later, 3% slower, and ranked it second.
TEST(BudgetedSearch, WhenTheScreeningSpendsTheBudgetTheBestTwoStillMeetInAFinalRound) {
  const Scripted s(0);
  FakeBench bench;
  bench.median = s.median;
  const std::string first = variant_name(s.space[1]), second = variant_name(s.space[2]);
  bench.median[first] = 0.49;
  bench.median[second] = 0.48;
  bench.median[s.fastest] = 5.0;
  bench.slowdown_per_call = 0.03;
  const double budget_ms = 1000;
  TuneSettings settings = budgeted(s, bench, budget_ms);
  settings.history = {s.exact_history()};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  const std::size_t final_timings = 2 * kFinalPasses;
  ASSERT_GT(bench.timed_with.size(), final_timings);
  EXPECT_GT(count_status(out, CandidateStatus::pruned, "when the budget left no time for round"), 0u);
  const std::size_t begin = bench.timed_with.size() - final_timings;
  std::set<std::string> finalists;
  for (std::size_t i = begin; i < bench.timed_with.size(); ++i) finalists.insert(bench.timed_with[i].first);
  EXPECT_EQ(finalists, (std::set<std::string>{first, second}));
  EXPECT_EQ(out.winner, second);
}

TEST(BudgetedSearch, ASelectionLargerThanTheTimeLeftIsCutWithAReason) {
  const Scripted s(0);
  FakeBench bench;
  for (const auto& [name, ms] : s.median) bench.median[name] = 10 * ms;
  TuneSettings settings = budgeted(s, bench, 200);
  // No history: the launch time is guessed from the FLOPs, far below the scripted 10 ms, so more
  // are selected than the budget can screen.
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_GT(count_status(out, CandidateStatus::pruned, "ran out before "), 0u);
  EXPECT_GE(screened(bench).size(), std::size_t(kFewestSelected));
  EXPECT_EQ(find_if(out.candidates.begin(), out.candidates.end(), [](const CandidateResult& c) {
              return c.status == CandidateStatus::ok;
            })->variant,
            out.winner);
}

// A first tuning: compiling the first chunk takes longer than the whole budget, and the winner is
// in that chunk but ranked after the first kFewestSelected. Its CUBIN is at hand, so it is
// screened (and wins) instead of being pruned as out of time; nothing of the next chunk compiles.
// (Otherwise a first tuning that compiled its winner in the first chunk runs out of budget and
// keeps a slower kernel.)
TEST(BudgetedSearch, CandidatesCompiledBeforeTheBudgetRanOutAreStillScreened) {
  const Scripted s(10);
  FakeBench bench;
  bench.median = s.median;
  TuneSettings settings = budgeted(s, bench, 1000);
  constexpr int kChunk = 8;
  settings.compile_threads = kChunk;
  std::mutex compiling;
  int compiled = 0;
  settings.compile = [&](const Variant& v, const std::string& arch) {
    std::lock_guard<std::mutex> lock(compiling);
    bench.clock_ms += 200;  // the chunk: 1600 ms of a 1000 ms budget
    ++compiled;
    return testing::fake_compile(v, arch);
  };
  MeasuredShape history = s.exact_history();
  history.median_ms[s.fastest] = 1.055;  // ranked 7th, after 1.00 to 1.05
  settings.history = {history};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_EQ(compiled, kChunk);
  EXPECT_EQ(screened(bench).size(), std::size_t(kChunk));
  EXPECT_EQ(out.winner, s.fastest);
  // Nothing of the next chunk was handed to the compilers, and a chunk ends compiled before its
  // screening: none was still compiling.
  EXPECT_GT(count_status(out, CandidateStatus::pruned, "ran out before the screening reached it"), 0u);
  EXPECT_EQ(count_status(out, CandidateStatus::pruned, "ran out before it was compiled"), 0u);
  EXPECT_EQ(out.unscreened, count_status(out, CandidateStatus::pruned, "ran out before "));
  EXPECT_EQ(out.still_compiling, 0u);
}

// The budget's clock for the streamed compilations: the fake bench's launches plus the real time
// the search spent waiting for a compilation.
std::function<double()> launches_and_waits(FakeBench& bench) {
  const auto start = std::chrono::steady_clock::now();
  return [&bench, start] {
    return bench.clock_ms +
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
}

// Streamed: the compilers keep ahead of the screening, and a compilation that has not ended at the
// deadline is not waited for: the first call costs its budget, and what is still queued is
// dropped (it never starts).
TEST(BudgetedSearch, StreamedCompilationsNotEndedAtTheDeadlineAreNotWaitedFor) {
  const Scripted s(10);
  FakeBench bench;
  bench.median = s.median;
  TuneSettings settings = budgeted(s, bench, 300);
  settings.now_ms = launches_and_waits(bench);
  settings.history = {s.exact_history()};
  settings.compile_threads = 4;
  constexpr std::size_t kEnded = 6;  // the first six started end at once, the others never
  std::vector<std::promise<void>> never_ending;
  never_ending.reserve(s.space.size());
  std::vector<detail::BackgroundCompile> started;
  settings.start_compile = [&](const Variant&, const std::string&) {
    if (started.size() < kEnded) {
      started.push_back(detail::already_compiled());
    } else {
      never_ending.emplace_back();
      started.push_back({never_ending.back().get_future().share(),
                         std::make_shared<std::atomic<bool>>(false)});
    }
    return started.back();
  };
  const auto start = std::chrono::steady_clock::now();
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  const double took_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took_ms, 2000.0);  // a wait of at most the 300 ms budget
  ASSERT_GT(started.size(), kEnded);
  EXPECT_EQ(screened(bench).size(), kEnded);  // the budget's clock never ran out before
  EXPECT_EQ(out.winner, s.fastest);           // ranked first by the exact history
  // Those handed over and never ended, and those the screening did not reach in time (never
  // handed over): the outcome counts both, which the info line of the tuning says
  // (tuning_coordinator.cpp).
  EXPECT_EQ(count_status(out, CandidateStatus::pruned, "ran out before it was compiled"),
            started.size() - kEnded);
  EXPECT_GT(count_status(out, CandidateStatus::pruned, "ran out before the screening reached it"), 0u);
  EXPECT_EQ(out.still_compiling, started.size() - kEnded);
  EXPECT_EQ(out.unscreened, count_status(out, CandidateStatus::pruned, "ran out before "));
  EXPECT_GT(out.unscreened, out.still_compiling);
  for (const auto& compilation : started) EXPECT_TRUE(compilation.dropped->load());
  for (auto& p : never_ending) p.set_value();
}

// Streamed, the first kFewestSelected candidates are waited for whatever the deadline, so that a
// tuning has a winner.
TEST(BudgetedSearch, StreamedCompilationsOfTheFewestScreenedAreWaitedFor) {
  const Scripted s(0);
  FakeBench bench;
  bench.median = s.median;
  TuneSettings settings = budgeted(s, bench, 1);
  settings.now_ms = launches_and_waits(bench);
  settings.compile_threads = 8;
  std::vector<std::shared_future<void>> compilations;
  settings.start_compile = [&](const Variant&, const std::string&) {
    compilations.push_back(std::async(std::launch::async, [] {
                             std::this_thread::sleep_for(std::chrono::milliseconds(30));
                           }).share());
    return detail::BackgroundCompile{compilations.back(), std::make_shared<std::atomic<bool>>(false)};
  };
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_GE(screened(bench).size(), std::size_t(kFewestSelected));
  EXPECT_EQ(std::find_if(out.candidates.begin(), out.candidates.end(), [](const CandidateResult& c) {
              return c.status == CandidateStatus::ok;
            })->variant,
            out.winner);
}

TEST(BudgetedSearch, QuickEffortKeepsEveryRoundQuick) {
  const Scripted s(5);
  FakeBench bench;
  bench.median = s.median;
  bench.timing = quick_timing_plan();
  TuneSettings settings = budgeted(s, bench, 2000);
  settings.history = {s.exact_history()};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_EQ(out.winner, s.fastest);
  for (const auto& [name, plan] : bench.timed_with) {
    EXPECT_LE(plan.warmup, quick_timing_plan().warmup);
    EXPECT_LE(plan.probe, quick_timing_plan().probe);
    EXPECT_LE(plan.max_samples, quick_timing_plan().max_samples);
  }
}

TEST(BudgetedSearch, AWrongFastCandidateNeverWinsUnderABudget) {
  const Scripted s(7);
  FakeBench bench;
  bench.median = s.median;
  bench.check[s.fastest] = {CandidateStatus::wrong_result, "1 of 4 elements wrong"};
  TuneSettings settings = budgeted(s, bench, 2000);
  settings.history = {s.exact_history()};
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, settings);
  EXPECT_NE(out.winner, s.fastest);
  bool recorded = false;
  for (const auto& c : out.candidates)
    if (c.variant == s.fastest) recorded = c.status == CandidateStatus::wrong_result;
  EXPECT_TRUE(recorded);
}

// Row-split plans under a budget: tried only where the winner's last wave leaves SMs idle.
const Problem kPlanned = Problem::dense(1100, 260, 300, 4);

struct PartBenches {
  std::vector<double> budgets;  // of each part's tuning
  PlanSettings settings() {
    PlanSettings p;
    p.bench_for = [](const Problem&) { return std::unique_ptr<CandidateBench>(new FakeBench); };
    return p;
  }
};

TEST(BudgetedSearch, PlansAreNotTriedWhenTheWinnersLastWaveIsNearlyFull) {
  // tiled_t16 on 1100 x 260: 69 x 17 = 1173 blocks, 9 waves of 132 with 15 slots idle.
  FakeBench bench;
  bench.median = {{"tiled_t16_p0", 1.0}};
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.space = {parse_variant("tiled_t16_p0")};
  settings.budget_ms = 2000;
  PartBenches parts;
  const auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings, parts.settings());
  EXPECT_TRUE(out.parts.empty());
  EXPECT_EQ(out.outcome.winner, "tiled_t16_p0");
  EXPECT_EQ(count_status(out.outcome, CandidateStatus::pruned, "not tried within the tuning budget"), 1u);
}

TEST(BudgetedSearch, PlansAreTriedWithinTheBudgetWhenTheLastWaveIsMostlyIdle) {
  // tiled_t32 on 1100 x 260: 35 x 9 = 315 blocks, 3 waves of 132: a fifth of the SM time idle.
  FakeBench bench;
  bench.median = {{"tiled_t32_p0", 1.0}, {"rowsplit_h1024", 0.8}};
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.space = {parse_variant("tiled_t32_p0")};
  settings.budget_ms = 2000;
  PartBenches parts;
  const auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings, parts.settings());
  EXPECT_EQ(out.parts.size(), 2u);
  EXPECT_EQ(out.outcome.winner, "rowsplit_h1024");
}

}  // namespace
}  // namespace tilemm::tuner

namespace tilemm::tuner {
namespace {

// Below highest, the FP32 result known for the shape (TuneSettings::highest_winner) is a
// candidate the budget cannot leave out: the tuning ends with the faster of it and what the
// search found, both timed on this bench (docs/tuning.md, "Precision modes").
struct HighProblem {
  Scripted s{40};
  Problem high = kSquare;
  std::vector<Variant> own;  // the high (tensor-core) kernels that can run it
  MeasuredShape misleading;  // a history that ranks the fastest FP32 kernel last
  explicit HighProblem(double own_ms) {
    high.precision = Precision::high;
    for (const auto& v : variant_space(Precision::high))
      if (can_run(v, testing::synthetic_h200(), high)) own.push_back(v);
    misleading = s.exact_history();
    misleading.median_ms[s.fastest] = 100.0;
    for (const auto& v : own) s.median[variant_name(v)] = own_ms;
  }
  TuneSettings settings(FakeBench& bench, double budget_ms, bool clock_runs) const {
    TuneSettings t = budgeted(s, bench, budget_ms, clock_runs);
    t.space.insert(t.space.end(), own.begin(), own.end());
    t.history = {misleading};
    return t;
  }
};

TEST(BudgetedSearch, AHighTuningEndsWithTheShapesFp32WinnerWhenTheSearchMissesAFasterOne) {
  const HighProblem h(0.8);
  ASSERT_FALSE(h.own.empty());
  // The search alone, misled by its ranking, does not time the fastest FP32 kernel.
  FakeBench alone;
  alone.median = h.s.median;
  const auto missed = tune(testing::synthetic_h200(), h.high, alone, h.settings(alone, kSizingBudgetMs, false));
  ASSERT_FALSE(screened(alone).count(h.s.fastest));
  ASSERT_NE(missed.winner, h.s.fastest);
  // Told the FP32 result's winner, it times it too, and it wins.
  for (const double budget : {kSizingBudgetMs, 150.0}) {  // 150: runs out during the screening
    FakeBench bench;
    bench.median = h.s.median;
    TuneSettings settings = h.settings(bench, budget, budget != kSizingBudgetMs);
    settings.highest_winner = h.s.fastest;
    const auto out = tune(testing::synthetic_h200(), h.high, bench, settings);
    EXPECT_EQ(out.winner, h.s.fastest) << budget;
    EXPECT_EQ(bench.timed_with.front().first, h.s.fastest) << "screened first";
  }
  // A winner outside the space given is admitted all the same.
  FakeBench bench;
  bench.median = h.s.median;
  TuneSettings settings = h.settings(bench, kSizingBudgetMs, false);
  settings.space.erase(std::remove_if(settings.space.begin(), settings.space.end(),
                                      [&](const Variant& v) { return variant_name(v) == h.s.fastest; }),
                       settings.space.end());
  settings.highest_winner = h.s.fastest;
  EXPECT_EQ(tune(testing::synthetic_h200(), h.high, bench, settings).winner, h.s.fastest);
}

TEST(BudgetedSearch, AFasterTensorCoreKernelBeatsTheShapesFp32Winner) {
  const HighProblem h(0.3);  // the tensor-core kernels beat every FP32 one
  FakeBench bench;
  bench.median = h.s.median;
  TuneSettings settings = h.settings(bench, kSizingBudgetMs, false);
  settings.highest_winner = h.s.fastest;
  const auto out = tune(testing::synthetic_h200(), h.high, bench, settings);
  EXPECT_EQ(precision_of(parse_variant(out.winner)), Precision::high) << out.winner;
  EXPECT_TRUE(screened(bench).count(h.s.fastest));  // timed, and lost on the same bench
  // The FP32 winner's timing is recorded like any candidate's.
  for (const auto& c : out.candidates)
    if (c.variant == h.s.fastest) {
      EXPECT_DOUBLE_EQ(c.stats.median_ms, 0.5);
    }
}

TEST(BudgetedSearch, TheFp32WinnerIsNotPrunedByTheCheapRulesButStillMustRunTheProblem) {
  // A tile so large that its grid fills under a quarter of the SMs, while tiled_t16's fills
  // them all: the underfilled rule prunes it before anything compiles.
  const Problem high = [] {
    Problem p = Problem::square(512);
    p.precision = Precision::high;
    return p;
  }();
  std::string big;
  for (const auto& v : variant_space())
    if (can_run(v, testing::synthetic_h200(), high) &&
        detail::launched_blocks(v, high, testing::synthetic_h200().sm_count) * 4 <
            std::uint64_t(testing::synthetic_h200().sm_count)) {
      big = variant_name(v);
      break;
    }
  ASSERT_FALSE(big.empty());
  FakeBench bench;
  bench.median = {{big, 0.1}, {"tiled_t16_p0", 1.0}};
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.space = {parse_variant("tiled_t16_p0"), parse_variant(big)};
  settings.budget_ms = 2000;  // the pruning rules shape only a budgeted search
  const auto pruned = tune(testing::synthetic_h200(), high, bench, settings);
  ASSERT_EQ(pruned.winner, "tiled_t16_p0");  // the rule prunes it without being told
  settings.highest_winner = big;
  EXPECT_EQ(tune(testing::synthetic_h200(), high, bench, settings).winner, big);
  // A winner that cannot run the problem (a newer precision rule, another device) stays refused.
  Problem odd = Problem::dense(512, 512, 512, 1);
  odd.precision = Precision::high;
  settings.highest_winner = "warptile_bm128_bn128_bk16_wm64_wn32_tm8_tn4_v4_mb1";
  const auto out = tune(testing::synthetic_h200(), odd, bench, settings);
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  for (const auto& c : out.candidates)
    if (c.variant == settings.highest_winner) {
      EXPECT_EQ(c.status, CandidateStatus::cannot_run);
    }
}

// streamk's 32 tiles of 128 x 256 at 128 x 8192 x 8192 are cut in K across a persistent block per
// SM: the kernel fills the machine, and the underfill rule, which counts the blocks a call
// launches, leaves it to be timed.
TEST(BudgetedSearch, PersistentBlocksThatFillTheSmsAreNotUnderfilled) {
  const Problem wide = Problem::dense(128, 8192, 8192, 4);
  const std::string streamk = "streamk_bm128_bn256_bk8_st4_v4";
  const int sms = testing::synthetic_h200().sm_count;
  ASSERT_LT(detail::grid_blocks(parse_variant(streamk), wide) * 4, std::uint64_t(sms));
  EXPECT_EQ(detail::launched_blocks(parse_variant(streamk), wide, sms), std::uint64_t(sms));
  FakeBench bench;
  bench.median = {{streamk, 0.5}, {"tiled_t16_p0", 1.0}};
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.space = {parse_variant("tiled_t16_p0"), parse_variant(streamk)};
  settings.budget_ms = 2000;  // where the underfill rule applies
  const auto out = tune(testing::synthetic_h200(), wide, bench, settings);
  EXPECT_EQ(out.winner, streamk);
  EXPECT_EQ(count_status(out, CandidateStatus::pruned, "fill under a quarter"), 0u);
}

TEST(BudgetedSearch, TheShapesFp32PlanIsTriedWhereTheBudgetTriesNoPlanWithItsPartsFp32Winners) {
  // tiled_t16 on 1100 x 260 leaves its last wave nearly full: the budget alone tries no plan.
  Problem high = kPlanned;
  high.precision = Precision::high;
  PlanSettings plans;
  plans.bench_for = [](const Problem& part) {
    auto b = std::make_unique<FakeBench>();
    // The parts' FP32 winners are the fastest for them.
    b->median = {{"tiled_t16_p0", 1.0}, {part.M == 1024 ? "tiled_t32_p0" : "tiled_t8_p0", 0.5}};
    return std::unique_ptr<CandidateBench>(std::move(b));
  };
  plans.highest_part_winners = {{1024, "tiled_t32_p0"}, {76, "tiled_t8_p0"}};
  FakeBench bench;
  bench.median = {{"tiled_t16_p0", 1.0}, {"rowsplit_h1024", 0.8}};
  TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.space = {parse_variant("tiled_t16_p0")};
  settings.budget_ms = 2000;
  const auto alone = tune_with_plans(testing::synthetic_h200(), high, bench, settings, plans);
  ASSERT_EQ(alone.outcome.winner, "tiled_t16_p0");  // not told: no plan tried
  ASSERT_TRUE(alone.parts.empty());

  settings.highest_winner = "rowsplit_h1024";
  const auto out = tune_with_plans(testing::synthetic_h200(), high, bench, settings, plans);
  EXPECT_EQ(out.outcome.winner, "rowsplit_h1024");
  EXPECT_EQ(bench.plans, std::vector<std::string>{"rowsplit_h1024: tiled_t32_p0 + tiled_t8_p0"});
  // Its parts were tuned at high, each with its own FP32 winner among its candidates, for the
  // caller to store: gemm() runs the plan's parts by these entries.
  ASSERT_EQ(out.parts.size(), 2u);
  for (const auto& part : out.parts) {
    EXPECT_EQ(part.problem.precision, Precision::high);
    EXPECT_EQ(part.outcome.winner, part.problem.M == 1024 ? "tiled_t32_p0" : "tiled_t8_p0");
  }
}

}  // namespace
}  // namespace tilemm::tuner
