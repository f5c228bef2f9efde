// The tuner's search and selection with a fake compiler and a fake bench: no GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "fake_bench.hpp"
#include "family_registry.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "gpu_bench.hpp"
#include "row_split.hpp"
#include "row_split_candidates.hpp"
#include "split_k_worth.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

using testing::FakeBench;
using testing::fake_compile;

// The fake compiler, recording what the tuner asked it to compile (from several threads).
struct CompileLog {
  std::vector<std::string> names;
  std::mutex mutex;
  Compiler recorder() {
    return [this](const Variant& v, const std::string& arch) {
      std::lock_guard<std::mutex> lock(mutex);
      names.push_back(variant_name(v));
      return fake_compile(v, arch);
    };
  }
};

TuneSettings settings_for(std::vector<std::string> names) {
  TuneSettings s;
  s.compile = fake_compile;
  s.compile_threads = 2;
  for (const auto& n : names) s.space.push_back(parse_variant(n));
  return s;
}

// The same under a budget, where the pruning rules apply (the exhaustive search times every
// candidate that can run: test_pruning_rules.cpp), that never runs out: the clock stands still
// and the selection keeps every candidate. `history` ranks them (empty: the ranking's prior).
TuneSettings budgeted(TuneSettings s, std::map<std::string, double> history = {}) {
  s.budget_ms = 1e6;
  s.now_ms = [] { return 0.0; };
  if (!history.empty()) s.history = {{512, 512, 512, std::move(history)}};
  return s;
}

const CandidateResult& find(const TuneOutcome& out, const std::string& name) {
  for (const auto& c : out.candidates)
    if (c.variant == name) return c;
  throw std::runtime_error("no candidate " + name);
}

TEST(TunerSelection, LowestMedianWinsAndMarginIsToTheRunnerUp) {
  FakeBench bench;
  bench.median = {{"tiled_t8_p0", 3.0}, {"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 2.5}};
  const auto out = tune(testing::synthetic_h200(), Problem::square(512),
                        bench, settings_for({"tiled_t8_p0", "tiled_t16_p0", "tiled_t32_p0"}));
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  EXPECT_DOUBLE_EQ(out.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(out.margin, 2.5 / 2.0 - 1.0);
  ASSERT_EQ(out.candidates.size(), 3u);
  EXPECT_EQ(out.candidates[0].variant, "tiled_t16_p0");
  EXPECT_EQ(out.candidates[1].variant, "tiled_t32_p0");
  EXPECT_EQ(out.candidates[2].variant, "tiled_t8_p0");
  EXPECT_EQ(out.winner_binary.name, "tiled_t16_p0");
}

TEST(TunerSelection, WrongAndFailedCandidatesNeverWinEvenWhenFastest) {
  FakeBench bench;
  bench.median = {{"tiled_t8_p0", 0.1}, {"tiled_t16_p0", 0.2}, {"tiled_t32_p0", 5.0},
                  {"tiled_t8_p1", 0.05}, {"naive", 9.0}};
  bench.check["tiled_t8_p0"] = {CandidateStatus::wrong_result, "17 elements wrong"};
  bench.check["tiled_t16_p0"] = {CandidateStatus::launch_error, "kernel failed"};
  TuneSettings s = settings_for({"tiled_t8_p0", "tiled_t16_p0", "tiled_t32_p0", "tiled_t8_p1", "naive"});
  s.compile = [](const Variant& v, const std::string& arch) {
    if (variant_name(v) == "tiled_t8_p1")
      throw CompileError("tiled_t8_p1", "error: something\nmore", "compile failed");
    return fake_compile(v, arch);
  };
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, s);
  EXPECT_EQ(out.winner, "tiled_t32_p0");
  EXPECT_EQ(find(out, "tiled_t8_p0").status, CandidateStatus::wrong_result);
  EXPECT_EQ(find(out, "tiled_t8_p0").reason, "17 elements wrong");
  EXPECT_EQ(find(out, "tiled_t16_p0").status, CandidateStatus::launch_error);
  EXPECT_EQ(find(out, "tiled_t8_p1").status, CandidateStatus::compile_error);
  EXPECT_EQ(find(out, "tiled_t8_p1").reason, "error: something");
  // Nothing that failed verification or compilation was timed.
  for (const auto& name : bench.timed) {
    EXPECT_NE(name, "tiled_t8_p0");
    EXPECT_NE(name, "tiled_t16_p0");
    EXPECT_NE(name, "tiled_t8_p1");
  }
  // Ok candidates first, failures after.
  EXPECT_EQ(out.candidates[0].status, CandidateStatus::ok);
  EXPECT_EQ(out.candidates[1].status, CandidateStatus::ok);
  EXPECT_NE(out.candidates[2].status, CandidateStatus::ok);
}

TEST(TunerSelection, CandidatesThatCannotRunAreRecordedAndNeverCompiled) {
  FakeBench bench;
  auto device = testing::synthetic_h200();
  device.max_threads_per_block = 256;  // rejects the 32 x 32 tile
  TuneSettings s = settings_for({"tiled_t32_p0", "tiled_t16_p0"});
  int compiled = 0;
  s.compile_threads = 1;
  s.compile = [&](const Variant& v, const std::string& arch) {
    ++compiled;
    EXPECT_NE(variant_name(v), "tiled_t32_p0");
    return fake_compile(v, arch);
  };
  const auto out = tune(device, Problem::square(64), bench, s);
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  EXPECT_EQ(find(out, "tiled_t32_p0").status, CandidateStatus::cannot_run);
  EXPECT_NE(find(out, "tiled_t32_p0").reason.find("threads per block"), std::string::npos);
}

TEST(TunerSelection, TiesAreBrokenByNameDeterministically) {
  FakeBench bench;
  bench.median = {{"tiled_t8_p0", 1.0}, {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.0}};
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench,
                        settings_for({"tiled_t32_p0", "tiled_t8_p0", "tiled_t16_p0"}));
  EXPECT_EQ(out.winner, "tiled_t16_p0");  // lexicographically first of the tied names
  EXPECT_DOUBLE_EQ(out.margin, 0.0);
}

TEST(TunerSelection, FarSlowerCandidatesArePrunedAfterTheWarmUpUnderABudget) {
  FakeBench bench;
  bench.median = {{"tiled_t8_p0", 1.0}, {"tiled_t16_p0", 10.0}, {"tiled_t32_p0", 2.0}};
  // Ranked from a measurement of the same shape: tiled_t16 is timed after a faster one.
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench,
                        budgeted(settings_for({"tiled_t8_p0", "tiled_t16_p0", "tiled_t32_p0"}),
                                 bench.median));
  EXPECT_EQ(out.winner, "tiled_t8_p0");
  EXPECT_EQ(find(out, "tiled_t16_p0").status, CandidateStatus::pruned);
  EXPECT_EQ(find(out, "tiled_t16_p0").reason, "warm-up median above 3x the best so far");
  EXPECT_EQ(find(out, "tiled_t32_p0").status, CandidateStatus::ok);
}

// A candidate that failed in an earlier tuning worker (tilemm-tune's watchdog) is neither compiled
// nor timed again: it is a launch error with the earlier failure as its reason.
TEST(TunerSelection, SkippedCandidatesKeepTheirEarlierFailure) {
  FakeBench bench;
  CompileLog compiled;
  TuneSettings s = settings_for({"tiled_t8_p0", "tiled_t16_p0"});
  s.compile = compiled.recorder();
  s.skip = {{"tiled_t8_p0", "crashed the worker process (killed by signal Segmentation fault)"}};
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, s);
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  EXPECT_EQ(find(out, "tiled_t8_p0").status, CandidateStatus::launch_error);
  EXPECT_EQ(find(out, "tiled_t8_p0").reason, s.skip.at("tiled_t8_p0"));
  EXPECT_EQ(compiled.names, std::vector<std::string>{"tiled_t16_p0"});
  EXPECT_EQ(bench.timed, std::vector<std::string>{"tiled_t16_p0"});

  CandidateResult other;
  other.variant = "tiled_t16_p0";
  EXPECT_FALSE(record_skip(other, s));
  EXPECT_EQ(other.status, CandidateStatus::ok);
  EXPECT_TRUE(other.reason.empty());
}

TEST(TunerSelection, TilesThatLeaveMostSmsIdleAreNeverCompiledUnderABudget) {
  // 512 x 512: 256 x 128 tiles give 8 blocks for 132 SMs, 32 x 32 tiles give 256.
  FakeBench bench;
  TuneSettings s =
      budgeted(settings_for({"tiled_t32_p0", "warptile_bm256_bn128_bk16_wm64_wn64_tm8_tn4_v4_mb1"}));
  CompileLog log;
  s.compile = log.recorder();
  std::vector<std::string>& compiled = log.names;
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, s);
  EXPECT_EQ(compiled, std::vector<std::string>{"tiled_t32_p0"});
  const auto& big = find(out, "warptile_bm256_bn128_bk16_wm64_wn64_tm8_tn4_v4_mb1");
  EXPECT_EQ(big.status, CandidateStatus::pruned);
  EXPECT_NE(big.reason.find("8 blocks"), std::string::npos) << big.reason;
  // At 4096 the same tile fills the GPU and is a candidate.
  compiled.clear();
  tune(testing::synthetic_h200(), Problem::square(4096), bench, s);
  EXPECT_EQ(compiled.size(), 2u);
}

TEST(TunerSelection, SplitKIsTriedOnlyWhereTheUnsplitGridLeavesSmsIdleUnderABudget) {
  const std::string tile64 = "splitk_bm64_bn64_bk16_wm32_wn32_tm8_tn4_v4_s4";
  const std::string tile64_s8 = "splitk_bm64_bn64_bk16_wm32_wn32_tm8_tn4_v4_s8";
  FakeBench bench;
  TuneSettings s = budgeted(settings_for({"tiled_t32_p0", tile64, tile64_s8}));
  CompileLog log;
  s.compile = log.recorder();
  std::vector<std::string>& compiled = log.names;
  // 512^3: 64 tiles of 64 x 64 for 132 SMs, K = 512 in 4 or 8 slices of 128 or 64: both tried.
  tune(testing::synthetic_h200(), Problem::square(512), bench, s);
  EXPECT_EQ(compiled.size(), 3u);
  // 512 x 512 x 64: 8 slices would leave 8 of K each, under one K tile.
  compiled.clear();
  const auto shallow = tune(testing::synthetic_h200(), Problem::dense(512, 512, 64, 4), bench, s);
  EXPECT_EQ(find(shallow, tile64_s8).status, CandidateStatus::pruned);
  EXPECT_NE(find(shallow, tile64_s8).reason.find("under 16 per slice"), std::string::npos);
  EXPECT_EQ(compiled.size(), 2u);
  // 2048^3: 1024 tiles already fill the SMs: no split is compiled.
  compiled.clear();
  const auto big = tune(testing::synthetic_h200(), Problem::square(2048), bench, s);
  EXPECT_EQ(compiled, std::vector<std::string>{"tiled_t32_p0"});
  EXPECT_EQ(find(big, tile64).status, CandidateStatus::pruned);
  EXPECT_NE(find(big, tile64).reason.find("1024 tiles already give"), std::string::npos)
      << find(big, tile64).reason;
  // 576 x 1024 x 512: 9 x 16 = 144 tiles for 132 SMs, a second wave of 12 blocks that a split
  // fills again: both splits tried.
  compiled.clear();
  tune(testing::synthetic_h200(), Problem::dense(576, 1024, 512, 4), bench, s);
  EXPECT_EQ(compiled.size(), 3u);
}

TEST(TunerSelection, SplitKIsPrunedOnlyWhereTheUnsplitWavesAreNearlyFull) {
  EXPECT_DOUBLE_EQ(detail::wave_fill(132, 132), 1.0);
  EXPECT_DOUBLE_EQ(detail::wave_fill(133, 132), 133.0 / 264.0);
  EXPECT_DOUBLE_EQ(detail::wave_fill(66, 132), 0.5);
  EXPECT_EQ(detail::wave_fill(0, 132), 0.0);
  EXPECT_EQ(detail::wave_fill(10, 0), 0.0);
  EXPECT_TRUE(detail::unsplit_grid_fills_the_sms(131, 132).empty());  // an SM without a block
  EXPECT_TRUE(detail::unsplit_grid_fills_the_sms(136, 132).empty());  // second wave 3% full
  EXPECT_TRUE(detail::unsplit_grid_fills_the_sms(322, 132).empty());  // 3 waves, 81% full
  EXPECT_TRUE(detail::unsplit_grid_fills_the_sms(500, 0).empty());    // SM count unknown
  EXPECT_EQ(detail::unsplit_grid_fills_the_sms(132, 132),
            "its 132 tiles already give each of the 132 SMs a block, in waves 100% full, "
            "without splitting K");
  EXPECT_NE(detail::unsplit_grid_fills_the_sms(1875, 132).find("in waves 94% full"),
            std::string::npos);  // 15 waves, the last 27% full
}

TEST(TunerSelection, AlignedCopiesAreTriedOnlyForUnalignedProblemsUnderABudget) {
  const std::string padded = "padded_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4";
  FakeBench bench;
  const TuneSettings s = budgeted(settings_for({"tiled_t32_p0", padded}));
  const auto odd = tune(testing::synthetic_h200(), Problem::dense(4097, 4097, 4097, 4), bench, s);
  EXPECT_EQ(find(odd, padded).status, CandidateStatus::ok);  // 4097 allows only class 1
  const auto aligned = tune(testing::synthetic_h200(), Problem::square(4096), bench, s);
  EXPECT_EQ(find(aligned, padded).status, CandidateStatus::pruned);
  EXPECT_NE(find(aligned, padded).reason.find("the problem is aligned"), std::string::npos);
}

TEST(TunerSelection, NoCorrectCandidateIsAnErrorThatListsTheStatuses) {
  FakeBench bench;
  bench.check["naive"] = {CandidateStatus::wrong_result, "all wrong"};
  try {
    tune(testing::synthetic_h200(), Problem::square(8), bench, settings_for({"naive"}));
    FAIL() << "tuning without a correct candidate succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("naive: wrong_result all wrong"), std::string::npos)
        << e.what();
  }
}

TEST(TunerSelection, SummaryStatisticsAreMedianMinAndSpread) {
  const TimingStats odd = summarize({5, 1, 3, 2, 4});
  EXPECT_FLOAT_EQ(static_cast<float>(odd.median_ms), 3.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(odd.min_ms), 1.0f);
  EXPECT_EQ(odd.samples, 5);
  EXPECT_NEAR(odd.spread, (5.0 - 1.0) / 3.0, 1e-9);  // p90 and p10 of 5 samples: the extremes
  const TimingStats even = summarize({4, 1, 3, 2});
  EXPECT_FLOAT_EQ(static_cast<float>(even.median_ms), 2.5f);
  EXPECT_EQ(summarize({}).samples, 0);
}

TEST(TunerSelection, QuickEffortTimesEachCandidateWithAFewLaunches) {
  const auto launches = [](const TimingPlan& p) { return p.warmup + p.probe + p.max_samples; };
  const TimingPlan standard = standard_timing_plan();
  const TimingPlan quick = quick_timing_plan();
  // Only the exact value "quick" selects it; anything else keeps the careful timing.
  for (const char* value : {static_cast<const char*>(nullptr), "", "Quick", "quick ", "fast"})
    EXPECT_EQ(launches(timing_plan_for(value)), launches(standard)) << (value ? value : "unset");
  EXPECT_EQ(launches(timing_plan_for("quick")), launches(quick));
  EXPECT_LE(launches(quick), 6);
  EXPECT_GE(quick.min_samples, 3);  // still a median of several
  EXPECT_EQ(quick.min_samples, quick.max_samples);
  EXPECT_GE(standard.min_samples, 15);
  EXPECT_GT(standard.max_samples, standard.min_samples);
}


// Row-split plans as candidates: 1100 rows give one plan, rowsplit_h1024 (1024 + 76 rows). Each
// part's bench is a FakeBench of its own, scripted by M; the plan's time is scripted on the
// shape's bench.
struct PlanBenches {
  std::map<std::int64_t, std::map<std::string, double>> medians;  // per part M
  std::map<std::int64_t, std::map<std::string, CheckResult>> checks;
  std::vector<std::int64_t> made;  // the parts a bench was made for
  PlanSettings settings() {
    PlanSettings p;
    p.bench_for = [this](const Problem& part) {
      made.push_back(part.M);
      auto bench = std::make_unique<FakeBench>();
      bench->median = medians[part.M];
      bench->check = checks[part.M];
      return std::unique_ptr<CandidateBench>(std::move(bench));
    };
    return p;
  }
};

const Problem kPlanned = Problem::dense(1100, 260, 300, 4);
const std::vector<std::string> kPlanSpace = {"tiled_t16_p0", "tiled_t32_p0"};

TEST(TunerPlans, APlanWinsWhenItsPartsRunFasterAndItsPartsAreReturned) {
  ASSERT_EQ(detail::row_split_heights(kPlanned), std::vector<std::int64_t>{1024});
  FakeBench bench;
  bench.median = {{"tiled_t16_p0", 4.0}, {"tiled_t32_p0", 5.0}, {"rowsplit_h1024", 3.0}};
  PlanBenches parts;
  parts.medians[1024] = {{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 2.5}};
  parts.medians[76] = {{"tiled_t16_p0", 1.5}, {"tiled_t32_p0", 1.0}};
  const auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench,
                                   settings_for(kPlanSpace), parts.settings());
  EXPECT_EQ(out.outcome.winner, "rowsplit_h1024");
  EXPECT_DOUBLE_EQ(out.outcome.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(out.outcome.margin, 4.0 / 3.0 - 1.0);
  ASSERT_EQ(out.outcome.candidates.size(), kPlanSpace.size() + 1);
  const auto& plan = find(out.outcome, "rowsplit_h1024");
  EXPECT_EQ(plan.status, CandidateStatus::ok);
  EXPECT_EQ(plan.reason, "rows 0-1023: tiled_t16_p0; rows 1024-1099: tiled_t32_p0");
  EXPECT_EQ(bench.plans, std::vector<std::string>{"rowsplit_h1024: tiled_t16_p0 + tiled_t32_p0"});
  // Both parts were tuned as shapes of their own, with every candidate, for the caller to store.
  ASSERT_EQ(out.parts.size(), 2u);
  EXPECT_EQ(out.parts[0].problem.M, 1024);
  EXPECT_EQ(out.parts[1].problem.M, 76);
  for (const auto& part : out.parts) {
    EXPECT_EQ(part.problem.N, kPlanned.N);
    EXPECT_EQ(part.problem.K, kPlanned.K);
    EXPECT_EQ(part.problem.ldc, kPlanned.ldc);
    EXPECT_EQ(part.outcome.candidates.size(), kPlanSpace.size());
  }
  EXPECT_EQ(out.parts[0].outcome.winner, "tiled_t16_p0");
  EXPECT_EQ(out.parts[1].outcome.winner, "tiled_t32_p0");
  EXPECT_EQ(parts.made, (std::vector<std::int64_t>{1024, 76}));
}

TEST(TunerPlans, APlanSlowerThanTheBestVariantLosesAndIsTimedInFullWhenFarSlower) {
  FakeBench bench;
  bench.median = {{"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 5.0}, {"rowsplit_h1024", 1.5}};
  PlanBenches parts;
  auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings_for(kPlanSpace),
                             parts.settings());
  EXPECT_EQ(out.outcome.winner, "tiled_t16_p0");
  EXPECT_EQ(find(out.outcome, "rowsplit_h1024").status, CandidateStatus::ok);
  EXPECT_EQ(out.outcome.candidates[1].variant, "rowsplit_h1024");  // ranked among the variants
  EXPECT_EQ(out.parts.size(), 2u);  // tuned all the same: stored for the shapes they are

  // Over 3x the best: the exhaustive search still times it in full (a budget would give up
  // after its warm-up), and its parts are named.
  bench.median["rowsplit_h1024"] = 10.0;
  out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings_for(kPlanSpace),
                        parts.settings());
  const auto& plan = find(out.outcome, "rowsplit_h1024");
  EXPECT_EQ(plan.status, CandidateStatus::ok);
  EXPECT_DOUBLE_EQ(plan.stats.median_ms, 10.0);
  EXPECT_EQ(plan.reason, "rows 0-1023: tiled_t16_p0; rows 1024-1099: tiled_t16_p0");
}

TEST(TunerPlans, AKnownPartWinnerIsUsedWithoutTuningThePart) {
  FakeBench bench;
  bench.median = {{"rowsplit_h1024", 1.0}};
  PlanBenches parts;
  PlanSettings plans = parts.settings();
  plans.known_winners[1024] = "tiled_t32_p0";
  const auto out =
      tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings_for(kPlanSpace), plans);
  EXPECT_EQ(parts.made, std::vector<std::int64_t>{76});
  ASSERT_EQ(out.parts.size(), 1u);
  EXPECT_EQ(out.parts[0].problem.M, 76);
  EXPECT_EQ(out.outcome.winner, "rowsplit_h1024");
  EXPECT_EQ(find(out.outcome, "rowsplit_h1024").reason,
            "rows 0-1023: tiled_t32_p0; rows 1024-1099: tiled_t16_p0");
}

TEST(TunerPlans, APartWhoseWinnerIsAPlanIsRefused) {
  FakeBench bench;
  bench.median = {{"rowsplit_h1024", 0.1}};
  PlanBenches parts;
  PlanSettings plans = parts.settings();
  plans.known_winners[1024] = "rowsplit_h512";
  const auto out =
      tune_with_plans(testing::synthetic_h200(), kPlanned, bench, settings_for(kPlanSpace), plans);
  const auto& plan = find(out.outcome, "rowsplit_h1024");
  EXPECT_EQ(plan.status, CandidateStatus::cannot_run);
  EXPECT_NE(plan.reason.find("a part's winner is itself a row-split plan (rows 0-1023: rowsplit_h512"),
            std::string::npos) << plan.reason;
  EXPECT_NE(out.outcome.winner, "rowsplit_h1024");
  EXPECT_TRUE(bench.plans.empty());  // never run
}

TEST(TunerPlans, SkipHooksApplyToPlansAndToTheirPartsTunings) {
  FakeBench bench;
  bench.median = {{"rowsplit_h1024", 0.1}};
  PlanBenches parts;
  TuneSettings s = settings_for(kPlanSpace);
  s.skip = {{"rowsplit_h1024", "crashed the worker process (killed by signal Aborted)"}};
  std::vector<std::string> announced;
  s.on_candidate = [&](const std::string& name) { announced.push_back(name); };
  auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, s, parts.settings());
  EXPECT_EQ(find(out.outcome, "rowsplit_h1024").status, CandidateStatus::launch_error);
  EXPECT_EQ(find(out.outcome, "rowsplit_h1024").reason, s.skip.at("rowsplit_h1024"));
  EXPECT_TRUE(parts.made.empty());  // a skipped plan tunes no part
  EXPECT_TRUE(out.parts.empty());

  // A variant skipped is skipped in the parts' tunings too; the plan is announced like a variant.
  s.skip = {{"tiled_t16_p0", "hung"}};
  announced.clear();
  out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, s, parts.settings());
  ASSERT_EQ(out.parts.size(), 2u);
  for (const auto& part : out.parts) {
    EXPECT_EQ(find(part.outcome, "tiled_t16_p0").status, CandidateStatus::launch_error);
    EXPECT_EQ(part.outcome.winner, "tiled_t32_p0");
  }
  EXPECT_EQ(std::count(announced.begin(), announced.end(), "rowsplit_h1024"), 1);
  EXPECT_EQ(out.outcome.winner, "rowsplit_h1024");
}

TEST(TunerPlans, APartThatCannotBeTunedMakesThePlanALaunchError) {
  FakeBench bench;
  bench.median = {{"rowsplit_h1024", 0.1}};
  PlanBenches parts;
  parts.checks[76] = {{"tiled_t16_p0", {CandidateStatus::wrong_result, "wrong"}},
                      {"tiled_t32_p0", {CandidateStatus::wrong_result, "wrong"}}};
  std::vector<std::string> failures;
  TuneSettings s = settings_for(kPlanSpace);
  s.on_launch_failure = [&](const std::string& name, const std::string&) { failures.push_back(name); };
  const auto out = tune_with_plans(testing::synthetic_h200(), kPlanned, bench, s, parts.settings());
  const auto& plan = find(out.outcome, "rowsplit_h1024");
  EXPECT_EQ(plan.status, CandidateStatus::launch_error);
  EXPECT_EQ(plan.reason, "tilemm: tuning found no correct candidate");  // its first line
  EXPECT_EQ(failures, std::vector<std::string>{"rowsplit_h1024"});
  EXPECT_EQ(out.outcome.winner, "tiled_t16_p0");
  EXPECT_EQ(out.parts.size(), 1u);  // the core, tuned before the rest failed
}

TEST(TunerPlans, ShapesWithoutAPartialRowOfTilesGetNoPlan) {
  FakeBench bench;
  PlanBenches parts;
  for (const Problem& p : {Problem::dense(1024, 260, 300, 4), Problem::dense(1000, 260, 300, 4)}) {
    const auto out = tune_with_plans(testing::synthetic_h200(), p, bench, settings_for(kPlanSpace),
                                     parts.settings());
    EXPECT_EQ(out.outcome.candidates.size(), kPlanSpace.size()) << p.M;
    EXPECT_TRUE(out.parts.empty());
  }
  EXPECT_TRUE(parts.made.empty());
}

}  // namespace
}  // namespace tilemm::tuner
