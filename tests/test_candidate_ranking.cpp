// The ranking behind the budgeted search: predictions carried over from measured shapes, on a
// synthetic cost model and on the shipped H200 measurements (leave one shape out, predict it from
// the others), all on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "candidate_ranking.hpp"
#include "family_registry.hpp"
#include "preloaded.hpp"
#include "row_split.hpp"
#include "synthetic_device.hpp"

namespace tilemm::tuner {
namespace {

std::vector<Variant> runnable(const Problem& p) {
  std::vector<Variant> out;
  const DeviceInfo device = testing::synthetic_h200();
  for (const Variant& v : variant_space())
    if (can_run(v, device, p)) out.push_back(v);
  return out;
}

TEST(CandidateRanking, ACarryOverToTheSameShapeIsTheMeasurementItself) {
  const Problem p = Problem::square(1000);
  for (const Variant& v : runnable(p)) EXPECT_DOUBLE_EQ(carry_over(v, p, 0.37, p, 132), 0.37);
}

TEST(CandidateRanking, ACarryOverScalesWithKAndWithWavesOverTheSms) {
  const Variant v = default_variant();
  const Problem a = Problem::dense(4096, 4096, 1024), b = Problem::dense(4096, 4096, 4096);
  EXPECT_DOUBLE_EQ(carry_over(v, a, 1.0, b, 132), 4.0);  // same grid, 4x the K per block
  // A grid under one wave costs one wave, whatever its size.
  const Problem tiny = Problem::dense(64, 128, 512), small = Problem::dense(128, 256, 512);
  EXPECT_DOUBLE_EQ(carry_over(v, tiny, 1.0, small, 132), 1.0);
}

// A persistent kernel runs one block per SM whatever the grid of tiles: its time follows the
// tiles' K loops each block shares (tiles / blocks), not the waves of its tiles. From 8192^3 (2048
// tiles of 128 x 256 on 132 blocks) to 128 x 8192 x 8192 (32 tiles, each cut across the 132 blocks)
// that is 1/64 of the time at the same K; counted as waves of tiles it would be 1/16, which ranks
// `streamk` below kernels that are slower there.
TEST(CandidateRanking, APersistentKernelsCarryOverScalesWithTheTilesEachBlockShares) {
  const Variant streamk = parse_variant("streamk_bm128_bn256_bk8_st3_v4");
  const Problem square = Problem::square(8192), wide = Problem::dense(128, 8192, 8192);
  ASSERT_EQ(detail::launched_blocks(streamk, wide, 132), 132u);
  ASSERT_EQ(detail::grid_blocks(streamk, wide), 32u);
  EXPECT_DOUBLE_EQ(carry_over(streamk, square, 64.0, wide, 132), 1.0);
  EXPECT_DOUBLE_EQ(carry_over(streamk, wide, 1.0, square, 132), 64.0);
  // Where its rule runs a block per tile, uncut (2048^2: 128 tiles), the launch is a plain grid of
  // one wave: one tile's K loop per SM, against 32 / 132 of one, 4x as long, at the wide shape.
  const Problem one_wave = Problem::square(2048);
  ASSERT_EQ(detail::launched_blocks(streamk, one_wave, 132), 128u);
  EXPECT_DOUBLE_EQ(carry_over(streamk, one_wave, 1.0, wide, 132), 32.0 / 132.0 * 4.0);
}

// Times that follow the model exactly (a per-variant cost per wave and per K) are predicted
// exactly, so the ranking is the true order.
TEST(CandidateRanking, PredictionsFromAModelThatHoldsGiveTheTrueOrder) {
  const Problem target = Problem::dense(1500, 1200, 900);
  const auto space = runnable(target);
  ASSERT_GT(space.size(), 20u);
  const auto cost = [&](const Variant& v, const Problem& p) {
    const double per_wave = 1.0 + double(std::hash<std::string>{}(variant_name(v)) % 1000) / 100.0;
    return carry_over(v, target, per_wave, p, 132);
  };
  std::vector<MeasuredShape> history;
  for (const auto& [m, n, k] : {std::tuple{1024, 1024, 1024}, {2048, 1000, 512}, {3000, 3000, 3000}}) {
    MeasuredShape e{m, n, k, {}};
    const Problem p = Problem::dense(m, n, k);
    for (const Variant& v : space)
      if (can_run(v, testing::synthetic_h200(), p)) e.median_ms[variant_name(v)] = cost(v, p);
    history.push_back(e);
  }
  const auto ranked = rank_candidates_by_history(space, target, 132, history);
  ASSERT_EQ(ranked.size(), space.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    // Every measured shape that timed it (a split whose workspace outgrows 3000^3 did not).
    const auto timed = std::count_if(history.begin(), history.end(), [&](const MeasuredShape& e) {
      return e.median_ms.count(variant_name(ranked[i].variant)) > 0;
    });
    ASSERT_GE(timed, 2) << variant_name(ranked[i].variant);
    ASSERT_EQ(ranked[i].basis, timed) << variant_name(ranked[i].variant);
    EXPECT_NEAR(ranked[i].predicted_ms, cost(ranked[i].variant, target), 1e-9 * ranked[i].predicted_ms);
    if (i > 0) {
      EXPECT_LE(ranked[i - 1].predicted_ms, ranked[i].predicted_ms);
    }
  }
}

TEST(CandidateRanking, VariantsNothingMeasuredComeLastInAStableOrder) {
  const Problem target = Problem::square(777);
  const auto space = runnable(target);
  MeasuredShape only{800, 800, 800, {{variant_name(space.back()), 0.5}}};
  const auto ranked = rank_candidates_by_history(space, target, 132, {only});
  EXPECT_EQ(variant_name(ranked.front().variant), variant_name(space.back()));
  EXPECT_EQ(ranked.front().basis, 1);
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    EXPECT_TRUE(std::isinf(ranked[i].predicted_ms));
  }
  auto reversed = space;
  std::reverse(reversed.begin(), reversed.end());
  const auto again = rank_candidates_by_history(reversed, target, 132, {only});
  for (std::size_t i = 0; i < ranked.size(); ++i)
    EXPECT_EQ(variant_name(again[i].variant), variant_name(ranked[i].variant));
}

TEST(CandidateRanking, TheBudgetedSelectionIsTheBestFewThenOneOfEachGridNotChosenYet) {
  std::vector<RankedCandidate> ranked(40);
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    ranked[i].predicted_ms = double(i);
    ranked[i].grid_blocks = i < 20 ? 100 : 200 + i / 10;  // grids 100, 202, 203
  }
  const auto chosen = budgeted_selection(ranked, 6, 4);
  ASSERT_EQ(chosen.size(), 10u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(chosen[i].predicted_ms, double(i));
  // The best of grid 202 (rank 20) and of grid 203 (rank 30), then two spread over the rest.
  std::vector<double> explored;
  for (std::size_t i = 6; i < chosen.size(); ++i) explored.push_back(chosen[i].predicted_ms);
  EXPECT_TRUE(std::count(explored.begin(), explored.end(), 20.0) == 1);
  EXPECT_TRUE(std::count(explored.begin(), explored.end(), 30.0) == 1);
  EXPECT_TRUE(std::is_sorted(explored.begin(), explored.end()));
  std::set<double> distinct(explored.begin(), explored.end());
  EXPECT_EQ(distinct.size(), 4u);
  EXPECT_EQ(budgeted_selection(ranked, 30, 20).size(), 40u);
}

// The shipped H200 measurements: each tuned shape's winner is predicted from the other shapes'
// candidate tables, and the budgeted selection must contain a candidate whose measured time is
// close to the winner's. The regret is that candidate's time over the winner's. A dozen shapes are
// a thin history (a device that tunes more has more neighbours), so the median is held to the
// issue's 1% here, and each shape's regret is printed; the GPU benchmark of docs/tuning.md
// measures the regret over random shapes.
TEST(CandidateRanking, OnTheShippedH200TablesTheSelectionHoldsAWinnerLeavingEachShapeOut) {
  std::vector<std::pair<Problem, MeasuredShape>> shapes;
  for (const auto& e : cache::preloaded_entries(detail::why_not_a_known_name)) {
    if (e.problem_class != "a4-dense") continue;
    MeasuredShape m{e.M, e.N, e.K, {}};
    for (const auto& c : e.candidates)
      if (c.status == CandidateStatus::ok && !detail::parse_row_split(c.variant))
        m.median_ms[c.variant] = c.stats.median_ms;
    if (m.median_ms.size() >= 10) shapes.emplace_back(Problem::dense(e.M, e.N, e.K), m);
  }
  if (shapes.size() < 4) GTEST_SKIP() << "the preloaded results hold fewer than 4 a4-dense tables";
  std::vector<double> regrets;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto& [problem, truth] = shapes[i];
    std::vector<MeasuredShape> others;
    for (std::size_t j = 0; j < shapes.size(); ++j)
      if (j != i) others.push_back(shapes[j].second);
    std::vector<Variant> space;  // what was timed in full there
    for (const auto& [name, ms] : truth.median_ms) space.push_back(parse_variant(name));
    const auto chosen = budgeted_selection(rank_candidates_by_history(space, problem, 132, others), 16, 8);
    double best_chosen = INFINITY, best = INFINITY;
    for (const auto& [name, ms] : truth.median_ms) best = std::min(best, ms);
    for (const auto& c : chosen) best_chosen = std::min(best_chosen, truth.median_ms.at(variant_name(c.variant)));
    regrets.push_back(best_chosen / best - 1.0);
    std::printf("%lldx%lldx%lld: %zu timed of %zu, regret %.2f%%\n", static_cast<long long>(problem.M),
                static_cast<long long>(problem.N), static_cast<long long>(problem.K), chosen.size(),
                space.size(), 100.0 * regrets.back());
  }
  std::sort(regrets.begin(), regrets.end());
  const double median = regrets[regrets.size() / 2];
  EXPECT_LE(median, 0.01) << "median regret";
}

}  // namespace
}  // namespace tilemm::tuner
