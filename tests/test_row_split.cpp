// Row-split plans on the CPU: their names, which core heights the tuner tries, and the
// arguments of each part.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "row_split.hpp"

namespace tilemm::detail {
namespace {

TEST(RowSplit, NamesRoundTripAndOnlyWellFormedOnesParse) {
  for (const std::int64_t rows : {1LL, 2816LL, 4096LL, 2147483647LL}) {
    const auto parsed = parse_row_split(row_split_name(rows));
    ASSERT_TRUE(parsed.has_value()) << rows;
    EXPECT_EQ(*parsed, rows);
  }
  EXPECT_EQ(row_split_name(2816), "rowsplit_h2816");
  for (const char* name : {"rowsplit_h", "rowsplit_h0", "rowsplit_h0256", "rowsplit_h12x",
                           "rowsplit_h-5", "rowsplit_h1234567890123456789", "rowsplit_2816",
                           "Rowsplit_h2816", "warptile_bm256_bn128_bk16_wm64_wn64_tm8_tn4_v4_mb1",
                           "naive", ""})
    EXPECT_FALSE(parse_row_split(name).has_value()) << name;
}

TEST(RowSplit, CoresAreMRoundedDownToTheLargeTilesWhereARowOfTilesIsLeftOver) {
  using Heights = std::vector<std::int64_t>;
  EXPECT_EQ(row_split_heights(Problem::square(3000)), (Heights{2816, 2944}));
  EXPECT_EQ(row_split_heights(Problem::square(4097, 1)), (Heights{4096}));
  EXPECT_EQ(row_split_heights(Problem::dense(1100, 260, 300)), (Heights{1024}));
  EXPECT_EQ(row_split_heights(Problem::dense(1025, 7, 9, 1)), (Heights{1024}));
  // Whole 128-row tiles: no partial row of tiles, and no core is split again.
  for (const std::int64_t m : {1024, 2944, 4096, 8192})
    EXPECT_TRUE(row_split_heights(Problem::square(m)).empty()) << m;
  // Small problems are split along K instead.
  for (const std::int64_t m : {1, 100, 1000, 1023})
    EXPECT_TRUE(row_split_heights(Problem::square(m)).empty()) << m;
  // Every core splits its problem into two parts, and no core or rest would be split again.
  for (std::int64_t m = 1000; m <= 9000; m += 7) {
    const Problem p = Problem::dense(m, 64, 64);
    for (const std::int64_t core : row_split_heights(p)) {
      EXPECT_TRUE(row_split_fits(core, p)) << m;
      EXPECT_TRUE(row_split_heights(rows_of(p, core)).empty()) << m;
      EXPECT_TRUE(row_split_heights(rows_of(p, m - core)).empty()) << m;
    }
  }
}

// A stored plan is served only at a height tuning makes, so that no part of a plan read from a
// file or a fleet's store is a plan itself: a chain M -> M - 1 -> M - 2 ... is refused at its
// first link.
TEST(RowSplit, OnlyThePlansTuningMakesAreKnownNames) {
  for (std::int64_t m = 1000; m <= 9000; m += 7) {
    const Problem p = Problem::dense(m, 64, 64);
    const auto heights = row_split_heights(p);
    for (const std::int64_t core : {m / 256 * 256, m / 128 * 128, m - 1, m / 2, std::int64_t{1}}) {
      const bool tuned = std::find(heights.begin(), heights.end(), core) != heights.end();
      EXPECT_EQ(is_tuned_row_split(core, p), tuned) << m << " at " << core;
      EXPECT_EQ(why_not_a_known_name(row_split_name(core), {m}).empty(), tuned) << m << " at " << core;
    }
  }
  EXPECT_EQ(why_not_a_known_name("rowsplit_h4096", {4097}), "");
  EXPECT_EQ(why_not_a_known_name("rowsplit_h2816", {3000}), "");
  for (const auto& [name, m] : std::vector<std::pair<const char*, std::int64_t>>{
           {"rowsplit_h4096", 4096}, {"rowsplit_h4095", 4096}, {"rowsplit_h1099", 1100}, {"rowsplit_h512", 1000}}) {
    const std::string why = why_not_a_known_name(name, {m});
    EXPECT_NE(why.find("not a plan that tuning makes for m = " + std::to_string(m)), std::string::npos)
        << name << ": " << why;
  }
}

TEST(RowSplit, APartIsItsRowsOfAAndCWithTheSameBAndLeadingDimensions) {
  std::vector<float> a(100 * 40), b(40 * 30), c(100 * 36);
  GemmArgs args;
  args.M = 100;
  args.N = 30;
  args.K = 37;
  args.alpha = 0.5f;
  args.beta = 2.0f;
  args.A = a.data();
  args.lda = 40;
  args.B = b.data();
  args.ldb = 30;
  args.C = c.data();
  args.ldc = 36;
  const GemmArgs rest = rows_of(args, 64, 36);
  EXPECT_EQ(rest.M, 36);
  EXPECT_EQ(rest.N, 30);
  EXPECT_EQ(rest.K, 37);
  EXPECT_EQ(rest.A, a.data() + 64 * 40);
  EXPECT_EQ(rest.B, b.data());
  EXPECT_EQ(rest.C, c.data() + 64 * 36);
  EXPECT_EQ(rest.lda, 40);
  EXPECT_EQ(rest.ldb, 30);
  EXPECT_EQ(rest.ldc, 36);
  EXPECT_EQ(rest.alpha, 0.5f);
  EXPECT_EQ(rest.beta, 2.0f);
  // The rows of an aligned problem are aligned alike: the part keeps the cache's problem class.
  const Problem whole = Problem::dense(3000, 3000, 3000);
  const Problem part = rows_of(whole, 184);
  EXPECT_EQ(part.M, 184);
  EXPECT_EQ(part.alignment, whole.alignment);
  EXPECT_EQ(std::tie(part.lda, part.ldb, part.ldc), std::tie(whole.lda, whole.ldb, whole.ldc));
}

// The one plan runner: the core's rows, then the rest's, each as rows_of gives them, in that
// order; and the parts it runs are the problems row_split_parts names for tuning.
TEST(RowSplit, ThePlanRunnerRunsTheCoreThenTheRestOfTheSameCall) {
  std::vector<float> a(300 * 20), b(20 * 10), c(300 * 10);
  GemmArgs args;
  args.M = 300;
  args.N = 10;
  args.K = 20;
  args.A = a.data();
  args.lda = 20;
  args.B = b.data();
  args.ldb = 10;
  args.C = c.data();
  args.ldc = 10;
  std::vector<int> order;
  std::vector<GemmArgs> parts;
  run_row_split(args, 256, [&](int part, const GemmArgs& rows) {
    order.push_back(part);
    parts.push_back(rows);
  });
  ASSERT_EQ(order, (std::vector<int>{0, 1}));
  EXPECT_EQ(parts[0].M, 256);
  EXPECT_EQ(parts[0].A, a.data());
  EXPECT_EQ(parts[0].C, c.data());
  EXPECT_EQ(parts[1].M, 44);
  EXPECT_EQ(parts[1].A, a.data() + 256 * 20);
  EXPECT_EQ(parts[1].C, c.data() + 256 * 10);
  EXPECT_EQ(parts[1].B, b.data());
  const auto problems = row_split_parts(args.problem(), 256);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(problems[i].M, parts[i].M) << i;
    const Problem ran = parts[i].problem();
    EXPECT_EQ(std::tie(problems[i].N, problems[i].K, problems[i].lda, problems[i].ldb, problems[i].ldc,
                       problems[i].alignment),
              std::tie(ran.N, ran.K, ran.lda, ran.ldb, ran.ldc, ran.alignment))
        << i;
  }
}

}  // namespace
}  // namespace tilemm::detail
