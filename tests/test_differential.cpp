// The randomized differential check of the public entry points: the case generator on the CPU,
// and on the GPU, tilemm-check run as a user would, with tuning off and on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "differential_case.hpp"
#include "differential_run.hpp"
#include "gpu_test_support.hpp"
#include "program_output.hpp"
#include "temp_dir.hpp"

namespace tilemm::check {
namespace {

bool same(const CaseSpec& a, const CaseSpec& b) { return describe(a) == describe(b); }

TEST(DifferentialCases, ACaseIsDrawnFromItsSeedAndIndexAlone) {
  for (std::int64_t i : {0, 1, 17, 1999}) {
    EXPECT_TRUE(same(draw_case(7, i), draw_case(7, i))) << describe(draw_case(7, i));
    EXPECT_FALSE(same(draw_case(7, i), draw_case(8, i)));
  }
  EXPECT_FALSE(same(draw_case(7, 3), draw_case(7, 4)));
  EXPECT_NE(describe(draw_case(7, 3)).find("tilemm-check --seed 7 --case 3"), std::string::npos);
}

// Over many draws, every class of input the issue of the square-transpose bug names shows up,
// and every case is a valid call within the work limit.
TEST(DifferentialCases, DrawsCoverEveryInputClassAndStayValid) {
  const DrawLimits limits;
  std::set<EntryPoint> entries;
  std::set<int> layouts_and_ops, batch_counts, offsets;
  std::set<float> scalars;
  int square = 0, square_a_transposed = 0, square_b_transposed = 0, one_wide = 0, prime = 0,
      tile_multiple = 0, tile_off_by_one = 0, padded = 0, gaps = 0, shared_operand = 0, empty = 0,
      above_1000 = 0;
  auto is_prime = [](std::int64_t v) {
    if (v < 2) return false;
    for (std::int64_t d = 2; d * d <= v; ++d)
      if (v % d == 0) return false;
    return true;
  };
  for (std::int64_t i = 0; i < 20000; ++i) {
    const CaseSpec c = draw_case(123, i, limits);
    SCOPED_TRACE(describe(c));
    entries.insert(c.entry);
    layouts_and_ops.insert(int(c.layout) * 4 + int(c.op_a) * 2 + int(c.op_b));
    if (c.entry == EntryPoint::gemm_row_major) {
      ASSERT_TRUE(c.layout == Layout::row_major && c.op_a == Op::none && c.op_b == Op::none);
    }
    ASSERT_GE(std::min({c.M, c.N, c.K}), 0);
    ASSERT_LE(std::max({c.M, c.N, c.K}), limits.max_dim);
    ASSERT_LE(double(c.M) * double(c.N) * double(c.K) * double(std::max<std::int64_t>(1, c.batch_count)), limits.max_work);
    const Storage a = storage_of(c.layout, c.op_a, c.M, c.K), b = storage_of(c.layout, c.op_b, c.K, c.N),
                  cs = storage_of(c.layout, Op::none, c.M, c.N);
    ASSERT_GE(c.lda, std::max<std::int64_t>(1, a.row_length));
    ASSERT_GE(c.ldb, std::max<std::int64_t>(1, b.row_length));
    ASSERT_GE(c.ldc, std::max<std::int64_t>(1, cs.row_length));
    padded += c.lda > std::max<std::int64_t>(1, a.row_length);
    offsets.insert(int(c.offset_a));
    scalars.insert(c.alpha == 0.0f || c.alpha == 1.0f || c.alpha == -1.0f ? c.alpha : 0.5f);
    scalars.insert(c.beta == 0.0f || c.beta == 1.0f || c.beta == -1.0f ? c.beta : 0.5f);
    if (is_batched(c.entry)) {
      batch_counts.insert(int(c.batch_count));
      ASSERT_GE(c.stride_c, span_of(cs, c.ldc));  // outputs never overlap
      gaps += c.stride_c > span_of(cs, c.ldc);
      shared_operand += c.batch_count > 1 && (c.stride_a == 0 || c.stride_b == 0);
    } else {
      ASSERT_EQ(c.batch_count, 1);
    }
    square += c.M == c.N && c.N == c.K;
    square_a_transposed += c.M == c.K && c.op_a == Op::transpose && c.M > 1;
    square_b_transposed += c.K == c.N && c.op_b == Op::transpose && c.N > 1;
    one_wide += c.M == 1 || c.N == 1 || c.K == 1;
    empty += c.M == 0 || c.N == 0 || c.K == 0;
    prime += is_prime(c.M) && c.M > 100;
    tile_multiple += c.N % 64 == 0 && c.N > 0;
    tile_off_by_one += (c.K + 1) % 32 == 0 || (c.K - 1) % 32 == 0;
    above_1000 += std::max({c.M, c.N, c.K}) > 1000;
  }
  EXPECT_EQ(entries.size(), std::size_t(kEntryPoints));
  EXPECT_EQ(layouts_and_ops.size(), 8u);
  EXPECT_EQ(batch_counts, (std::set<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(offsets, (std::set<int>{0, 1, 2, 3}));
  EXPECT_EQ(scalars, (std::set<float>{0.0f, 1.0f, -1.0f, 0.5f}));
  for (int count : {square, square_a_transposed, square_b_transposed, one_wide, prime, tile_multiple,
                    tile_off_by_one, padded, gaps, shared_operand, empty, above_1000})
    EXPECT_GT(count, 20);
}

TEST(DifferentialBound, IsTheFp32RoundingBoundOfAKTermDotProduct) {
  EXPECT_EQ(error_bound(0, 1.0), 2 * std::ldexp(1.0, -24));  // alpha, beta and the add
  EXPECT_EQ(error_bound(1000, 2.0), 1002 * 2 * std::ldexp(1.0, -24));
  EXPECT_EQ(error_bound(5, 0.0), 0.0);  // alpha = beta = 0: exactly zero
}

// ---- tilemm-check as a program --------------------------------------------------------------

using Output = testing::ProgramOutput;

Output run_check(const std::string& args) {
  return testing::run_command(std::string(TILEMM_CHECK_BINARY) + " " + args + " 2>&1");
}

TEST(TilemmCheckCli, UsageErrorsExitTwoAndHelpNamesTheExitCodes) {
  for (const char* bad : {"--cases 0", "--tuning maybe", "--seed -3", "--seed x", "--no-such-option",
                          "--precision low", "--precision"}) {
    const Output o = run_check(bad);
    EXPECT_EQ(o.code, 2) << bad << ": " << o.text;
    EXPECT_EQ(o.text.rfind("tilemm-check: error: ", 0), 0u) << o.text;
  }
  const Output help = run_check("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.text.find("Exit codes"), std::string::npos) << help.text;
  EXPECT_NE(help.text.find("--case INDEX"), std::string::npos) << help.text;
  const Output version = run_check("--version");
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.text.rfind("tilemm-check ", 0), 0u) << version.text;
}

TEST(TilemmCheckCli, WithoutADeviceItSaysSoAndFails) {
  if (device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  const Output o = run_check("--cases 3");
  EXPECT_EQ(o.code, 1) << o.text;
  EXPECT_NE(o.text.find("no CUDA device"), std::string::npos) << o.text;
}

// The seed: fresh per run (more data over time), TILEMM_TEST_SEED to repeat one. Printed, and
// every failure prints it with the command that reruns its case.
std::string seed_for_this_run() {
  if (const char* s = std::getenv("TILEMM_TEST_SEED"); s != nullptr && *s) return s;
  return std::to_string(testing::fresh_seed() % 1000000000ull);
}

void expect_all_pass(const std::string& args) {
  const std::string seed = seed_for_this_run();
  const Output o = run_check(args + " --seed " + seed);
  std::cout << o.text;  // the summary line, with the seed and the number of cases
  EXPECT_EQ(o.code, 0) << "tilemm-check " << args << " --seed " << seed << ":\n" << o.text;
  EXPECT_NE(o.text.find("cases passed"), std::string::npos) << o.text;
}

// The suite's case counts, times TILEMM_TEST_DIFFERENTIAL_SCALE (a positive integer) for a
// longer run.
std::string cases(int count) {
  int scale = 1;
  if (const char* s = std::getenv("TILEMM_TEST_DIFFERENTIAL_SCALE"); s != nullptr && *s)
    scale = std::max(1, std::atoi(s));
  return "--cases " + std::to_string(static_cast<long long>(count) * scale);
}

TEST(DifferentialGpu, EveryEntryPointMatchesFloat64WithTuningOff) {
  TILEMM_REQUIRE_DEVICE();
  expect_all_pass(cases(2000) + " --tuning off");
}

TEST(DifferentialGpu, EveryEntryPointMatchesFloat64WithTuningOn) {
  TILEMM_REQUIRE_DEVICE();
  testing::TempDir dir;
  expect_all_pass(cases(200) + " --tuning on --effort quick --cache " + dir.file("tuning.db"));
}

// Each reduced precision within its own bound (tuner::product_error added), every entry point:
// the tensor-core default with tuning off, the tuned winners with it on.
class DifferentialPrecision : public ::testing::TestWithParam<const char*> {};

TEST_P(DifferentialPrecision, EveryEntryPointMatchesFloat64WithinThePrecisionsBound) {
  TILEMM_REQUIRE_DEVICE();
  const std::string precision = std::string(" --precision ") + GetParam();
  expect_all_pass(cases(1000) + " --tuning off" + precision);
  testing::TempDir dir;
  expect_all_pass(cases(100) + " --tuning on --effort quick --cache " + dir.file("tuning.db") +
                  precision);
}

INSTANTIATE_TEST_SUITE_P(Modes, DifferentialPrecision, ::testing::Values("high", "medium"));

TEST(DifferentialBound, AReducedPrecisionAddsItsProductErrorToTheFp32Bound) {
  EXPECT_EQ(error_bound(1000, 2.0, Precision::highest), error_bound(1000, 2.0));
  EXPECT_EQ(error_bound(1000, 2.0, Precision::high), (1002 + 24) * 2 * std::ldexp(1.0, -24));
  EXPECT_EQ(error_bound(1000, 2.0, Precision::medium),
            1002 * 2 * std::ldexp(1.0, -24) +
                2 * (std::ldexp(1.0, -10) + std::ldexp(1.0, -11) + std::ldexp(1.0, -21)));
  EXPECT_EQ(error_bound(5, 0.0, Precision::medium), 0.0);
}

}  // namespace
}  // namespace tilemm::check
