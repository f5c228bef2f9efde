// Precision modes without a GPU: names, which variants serve which precision, can_run, the
// tuner's space and its FP32 fallbacks, the verification bounds, and the C API's setting.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <set>
#include <string>

#include "error_bound.hpp"
#include "fake_bench.hpp"
#include "family_registry.hpp"
#include "synthetic_device.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/error.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/tilemm.h"
#include "tuner.hpp"

namespace tilemm {
namespace {

constexpr Precision kAll[] = {Precision::highest, Precision::high, Precision::medium};

Problem with_precision(Problem p, Precision precision) {
  p.precision = precision;
  return p;
}

DeviceInfo synthetic_turing() {
  DeviceInfo d = testing::synthetic_h200();
  d.name = "Synthetic sm_75";
  d.cc_major = 7;
  d.cc_minor = 5;
  d.max_shared_per_block_optin = 64 * 1024;
  return d;
}

TEST(PrecisionNames, RoundTripAndRejectOtherSpellings) {
  for (const Precision p : kAll) EXPECT_EQ(parse_precision(to_string(p)), p);
  EXPECT_STREQ(to_string(Precision::highest), "highest");
  EXPECT_STREQ(to_string(Precision::high), "high");
  EXPECT_STREQ(to_string(Precision::medium), "medium");
  for (const char* bad : {"", "HIGH", "High", "tf32", "fp32", "highest ", "low"})
    EXPECT_FALSE(parse_precision(bad).has_value()) << bad;
}

TEST(PrecisionNames, AMoreAccurateKernelServesALessAccurateRequestNeverTheReverse) {
  EXPECT_TRUE(serves(Precision::highest, Precision::highest));
  EXPECT_TRUE(serves(Precision::highest, Precision::high));
  EXPECT_TRUE(serves(Precision::highest, Precision::medium));
  EXPECT_TRUE(serves(Precision::high, Precision::medium));
  EXPECT_FALSE(serves(Precision::high, Precision::highest));
  EXPECT_FALSE(serves(Precision::medium, Precision::high));
  EXPECT_FALSE(serves(Precision::medium, Precision::highest));
}

TEST(PrecisionSpace, TheSpacesPartitionEveryVariantAndHighestIsTheFp32Families) {
  std::size_t total = 0;
  std::set<std::string> seen;
  for (const Precision p : kAll) {
    const auto space = variant_space(p);
    EXPECT_FALSE(space.empty()) << to_string(p);
    for (const auto& v : space) {
      EXPECT_EQ(precision_of(v), p) << variant_name(v);
      EXPECT_TRUE(seen.insert(variant_name(v)).second) << variant_name(v);
      // Only the tensor-core families compute below FP32 accuracy.
      EXPECT_EQ(v.family == "tf32mma" || v.family == "tf32wgmma" || v.family == "tf32wgmmapad",
                p != Precision::highest)
          << variant_name(v);
    }
    total += space.size();
  }
  EXPECT_EQ(total, variant_space().size());
  // Every high kernel has a medium twin that differs only in SPLIT (medium has more: the tiles
  // too large in registers for 3xTF32).
  for (const auto& v : variant_space(Precision::high)) {
    std::string twin = variant_name(v);
    twin.replace(twin.rfind("_sp3"), 4, "_sp1");
    EXPECT_EQ(seen.count(twin), 1u) << variant_name(v);
  }
  EXPECT_LT(variant_space(Precision::high).size(), variant_space(Precision::medium).size());
}

TEST(PrecisionSpace, Tf32mmaHasAModestSpaceWhoseEveryVariantParsesBack) {
  const auto space = variant_space("tf32mma");
  EXPECT_GE(space.size(), 10u);
  EXPECT_LE(space.size(), 30u);
  for (const auto& v : space) {
    EXPECT_EQ(parse_variant(variant_name(v)), v);
    EXPECT_EQ(precision_of(v), v.param("sp") == 3 ? Precision::high : Precision::medium);
  }
  EXPECT_THROW(parse_variant("tf32mma_bm128_bn128_bk32_wm64_wn32_st4_sp3_v4"), InvalidArgument);
  EXPECT_THROW(parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp2_v4"), InvalidArgument);
  // 3xTF32 with promoted sums does not fit a 64x64 warp tile in 255 registers; one TF32 pass does.
  EXPECT_THROW(parse_variant("tf32mma_bm128_bn256_bk32_wm64_wn64_st3_sp3_v4"), InvalidArgument);
  EXPECT_EQ(precision_of(parse_variant("tf32mma_bm128_bn256_bk32_wm64_wn64_st3_sp1_v4")),
            Precision::medium);
}

TEST(PrecisionCanRun, ALessAccurateVariantIsRefusedNamingBothPrecisions) {
  const DeviceInfo h200 = testing::synthetic_h200();
  const Variant high = parse_variant("tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp3_v4");
  const Variant medium = parse_variant("tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp1_v4");
  const Problem square = Problem::square(1024);
  const Verdict refused = can_run(high, h200, square);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.reason.find("precision high"), std::string::npos) << refused.reason;
  EXPECT_NE(refused.reason.find("highest"), std::string::npos) << refused.reason;
  EXPECT_TRUE(can_run(high, h200, with_precision(square, Precision::high)).ok);
  EXPECT_TRUE(can_run(high, h200, with_precision(square, Precision::medium)).ok);
  EXPECT_FALSE(can_run(medium, h200, with_precision(square, Precision::high)).ok);
  EXPECT_TRUE(can_run(medium, h200, with_precision(square, Precision::medium)).ok);
  // FP32 kernels serve every precision.
  for (const Precision p : kAll)
    EXPECT_TRUE(can_run(default_variant(), h200, with_precision(square, p)).ok) << to_string(p);
}

TEST(PrecisionCanRun, Tf32mmaNeedsSm80AndItsVecNeedsTheAlignment) {
  const Variant v4 = parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp3_v4");
  const Variant v1 = parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp3_v1");
  const Problem aligned = with_precision(Problem::dense(1000, 1000, 1000, 4), Precision::high);
  const Problem odd = with_precision(Problem::dense(1001, 999, 997, 4), Precision::high);
  ASSERT_EQ(odd.alignment, 1);
  const Verdict old_gpu = can_run(v4, synthetic_turing(), aligned);
  EXPECT_FALSE(old_gpu.ok);
  EXPECT_NE(old_gpu.reason.find("compute capability 8.0"), std::string::npos) << old_gpu.reason;
  EXPECT_TRUE(can_run(v4, testing::synthetic_h200(), aligned).ok);
  EXPECT_FALSE(can_run(v4, testing::synthetic_h200(), odd).ok);
  EXPECT_TRUE(can_run(v1, testing::synthetic_h200(), odd).ok);
  EXPECT_TRUE(detail::variant_builds_for(v4, "sm_80"));
  EXPECT_FALSE(detail::variant_builds_for(v4, "sm_75"));
}

TEST(PrecisionCanRun, EveryTf32mmaVariantFitsAnH200AndAnA100AndItsSharedMemoryIsTheTemplates) {
  DeviceInfo a100 = testing::synthetic_h200();
  a100.cc_major = 8;
  a100.max_shared_per_block_optin = 163 * 1024;
  const Problem p = with_precision(Problem::square(4096), Precision::medium);
  for (const auto& v : variant_space("tf32mma")) {
    EXPECT_TRUE(can_run(v, testing::synthetic_h200(), p).ok) << variant_name(v);
    EXPECT_TRUE(can_run(v, a100, p).ok) << variant_name(v) << ": " << can_run(v, a100, p).reason;
    // The template's padded rows: A [BM][BK + 4], B [BK][BN + 8] floats per stage.
    const auto& f = detail::find_family("tf32mma");
    const std::size_t floats = static_cast<std::size_t>(v.param("st")) *
                               static_cast<std::size_t>(v.param("bm") * (v.param("bk") + 4) +
                                                        v.param("bk") * (v.param("bn") + 8));
    EXPECT_EQ(f.shared_bytes(v), floats * sizeof(float)) << variant_name(v);
    EXPECT_EQ(f.geometry(v, p).dynamic_shared_bytes, f.shared_bytes(v));
  }
}

TEST(PrecisionDefaults, EachPrecisionsDefaultComputesAtItAndRunsEveryAlignment) {
  for (const Precision p : kAll) {
    const Variant v = default_variant(p);
    EXPECT_EQ(precision_of(v), p) << variant_name(v);
    for (const int alignment : {1, 2, 4}) {
      const Problem problem = with_precision(Problem::dense(333, 517, 129, alignment), p);
      EXPECT_TRUE(can_run(v, testing::synthetic_h200(), problem).ok) << variant_name(v);
    }
  }
  EXPECT_EQ(default_variant(Precision::highest), default_variant());
}

TEST(PrecisionBounds, HighMeetsFp32sBoundAndMediumAddsTheTf32RoundingOfTheInputs) {
  for (const std::int64_t K : {1, 7, 64, 255, 256, 4096}) {
    const double fp32 = 2.0 * static_cast<double>(K + 3) * std::ldexp(1.0, -24);
    EXPECT_DOUBLE_EQ(tuner::error_bound_unit(Precision::highest, K), fp32) << K;
    EXPECT_DOUBLE_EQ(tuner::error_bound_unit(Precision::high, K), fp32) << K;
    EXPECT_DOUBLE_EQ(tuner::error_bound_unit(Precision::medium, K),
                     fp32 + std::ldexp(1.0, -10) + std::ldexp(1.0, -11) + std::ldexp(1.0, -21))
        << K;
  }
  EXPECT_LT(tuner::error_bound_unit(Precision::high, 64), tuner::error_bound_unit(Precision::high, 65));
}

// The tuner tries the problem's precision's kernels and, below highest, the FP32 ones, which
// are more accurate; nothing else of the registry.
TEST(PrecisionTuner, ASpaceIsThePrecisionsOwnKernelsAndTheFp32Ones) {
  for (const Precision p : kAll) {
    testing::FakeBench bench;
    tuner::TuneSettings settings;
    settings.compile = testing::fake_compile;
    settings.compile_threads = 1;
    const Problem problem = with_precision(Problem::square(2048), p);
    const auto out = tuner::tune(testing::synthetic_h200(), problem, bench, settings);
    const std::size_t fp32 = p == Precision::highest ? 0 : variant_space(Precision::highest).size();
    EXPECT_EQ(out.candidates.size(), variant_space(p).size() + fp32) << to_string(p);
    for (const auto& c : out.candidates) {
      const Precision offered = precision_of(parse_variant(c.variant));
      EXPECT_TRUE(offered == p || offered == Precision::highest) << c.variant;
    }
  }
}

// Asking for less precision never makes a call slower: the faster kernel wins, whichever
// precision it computes at, as long as it serves the request.
TEST(PrecisionTuner, TheFasterOfATensorCoreAndAnFp32KernelWins) {
  const std::string fp32 = variant_name(default_variant());
  const std::string tf32 = variant_name(default_variant(Precision::high));
  for (const bool fp32_faster : {true, false}) {
    testing::FakeBench bench;
    bench.median[fp32] = fp32_faster ? 1.0 : 3.0;
    bench.median[tf32] = fp32_faster ? 3.0 : 1.0;
    tuner::TuneSettings settings;
    settings.compile = testing::fake_compile;
    settings.compile_threads = 1;
    const auto out = tuner::tune(testing::synthetic_h200(),
                                 with_precision(Problem::square(2048), Precision::high), bench, settings);
    EXPECT_EQ(out.winner, fp32_faster ? fp32 : tf32);
  }
}

TEST(PrecisionTuner, WithoutTensorCoresAHighProblemIsTunedOverTheFp32Kernels) {
  testing::FakeBench bench;
  tuner::TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.compile_threads = 1;
  const auto out = tuner::tune(synthetic_turing(),
                               with_precision(Problem::square(1024), Precision::high), bench, settings);
  EXPECT_EQ(precision_of(parse_variant(out.winner)), Precision::highest);
  std::size_t refused_tf32 = 0;
  for (const auto& c : out.candidates)
    if (c.variant.rfind("tf32", 0) == 0) {  // tf32mma, tf32wgmma
      EXPECT_EQ(c.status, CandidateStatus::cannot_run) << c.variant;
      ++refused_tf32;
    }
  EXPECT_EQ(refused_tf32, variant_space(Precision::high).size());
}

TEST(PrecisionTuner, WhenNoKernelOfThePrecisionMeetsItsBoundTheFp32KernelsServe) {
  testing::FakeBench bench;
  for (const auto& v : variant_space(Precision::high))
    bench.check[variant_name(v)] = {CandidateStatus::wrong_result, "outside the bound"};
  tuner::TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.compile_threads = 1;
  const auto out = tuner::tune(testing::synthetic_h200(),
                               with_precision(Problem::dense(512, 512, 4, 4), Precision::high),
                               bench, settings);
  EXPECT_EQ(precision_of(parse_variant(out.winner)), Precision::highest);
  // Each high kernel verified was wrong (the rest pruned before, the FP32 kernels being faster
  // or the tile underfilling the SMs); none is ok.
  std::size_t wrong = 0;
  for (const auto& c : out.candidates)
    if (precision_of(parse_variant(c.variant)) == Precision::high) {
      EXPECT_NE(c.status, CandidateStatus::ok) << c.variant;
      wrong += c.status == CandidateStatus::wrong_result;
    }
  EXPECT_GE(wrong, 1u);
  // With a space given, nothing is added: the caller chose.
  tuner::TuneSettings given = settings;
  given.space = variant_space(Precision::high);
  EXPECT_THROW(tuner::tune(testing::synthetic_h200(),
                           with_precision(Problem::dense(512, 512, 4, 4), Precision::high), bench,
                           given),
               Error);
}

TEST(PrecisionOptions, DefaultIsTheEnvironmentsAndHighestWithoutIt) {
  // The test runs without TILEMM_PRECISION (ctest sets none).
  if (std::getenv("TILEMM_PRECISION") != nullptr) GTEST_SKIP() << "TILEMM_PRECISION is set";
  EXPECT_EQ(Options::precision_from_environment(), Precision::highest);
  EXPECT_EQ(Options{}.precision, Precision::highest);
}

TEST(PrecisionCApi, SetAndGetRoundTripAndOtherValuesAreRefused) {
  tilemmPrecision_t p = TILEMM_PRECISION_MEDIUM;
  ASSERT_EQ(tilemmGetPrecision(&p), TILEMM_STATUS_SUCCESS);
  EXPECT_EQ(p, TILEMM_PRECISION_HIGHEST);  // the environment's, unset
  ASSERT_EQ(tilemmSetPrecision(TILEMM_PRECISION_HIGH), TILEMM_STATUS_SUCCESS);
  ASSERT_EQ(tilemmGetPrecision(&p), TILEMM_STATUS_SUCCESS);
  EXPECT_EQ(p, TILEMM_PRECISION_HIGH);
  EXPECT_EQ(tilemmSetPrecision(static_cast<tilemmPrecision_t>(3)), TILEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tilemmGetLastErrorMessage()).find("precision"), std::string::npos);
  ASSERT_EQ(tilemmGetPrecision(&p), TILEMM_STATUS_SUCCESS);
  EXPECT_EQ(p, TILEMM_PRECISION_HIGH);  // unchanged by the refused value
  EXPECT_EQ(tilemmGetPrecision(nullptr), TILEMM_STATUS_INVALID_VALUE);
  ASSERT_EQ(tilemmSetPrecision(TILEMM_PRECISION_HIGHEST), TILEMM_STATUS_SUCCESS);
}

}  // namespace
}  // namespace tilemm
