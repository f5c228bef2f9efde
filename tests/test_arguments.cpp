// Bad input is rejected before anything is launched, with the offending argument named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "gpu_test_support.hpp"
#include "tilemm/error.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace {

// A valid 4x5x3 call on dummy (never dereferenced) pointers.
GemmArgs valid_args() {
  static float dummy[64];
  GemmArgs a;
  a.M = 4;
  a.N = 5;
  a.K = 3;
  a.A = dummy;
  a.lda = 3;
  a.B = dummy;
  a.ldb = 5;
  a.C = dummy;
  a.ldc = 5;
  return a;
}

std::string rejected_argument(const GemmArgs& a) {
  try {
    run_variant(default_variant(), a);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'" + e.argument() + "'"), std::string::npos);
    return e.argument();
  }
  return "<accepted>";
}

TEST(Arguments, ValidCallPassesValidation) { EXPECT_NO_THROW(validate(valid_args())); }

TEST(Arguments, NegativeDimensionsAreNamed) {
  auto a = valid_args();
  a.M = -1;
  EXPECT_EQ(rejected_argument(a), "M");
  a = valid_args();
  a.N = -5;
  EXPECT_EQ(rejected_argument(a), "N");
  a = valid_args();
  a.K = -2;
  EXPECT_EQ(rejected_argument(a), "K");
}

TEST(Arguments, DimensionsAbove32BitsAreRejected) {
  auto a = valid_args();
  a.K = std::int64_t{1} << 31;
  a.lda = a.K;
  EXPECT_EQ(rejected_argument(a), "K");
}

TEST(Arguments, NullPointersWithNonzeroDimensionsAreNamed) {
  auto a = valid_args();
  a.A = nullptr;
  EXPECT_EQ(rejected_argument(a), "A");
  a = valid_args();
  a.B = nullptr;
  EXPECT_EQ(rejected_argument(a), "B");
  a = valid_args();
  a.C = nullptr;
  EXPECT_EQ(rejected_argument(a), "C");
}

TEST(Arguments, LeadingDimensionsShorterThanARowAreNamed) {
  auto a = valid_args();
  a.lda = 2;  // A's rows hold K = 3
  EXPECT_EQ(rejected_argument(a), "lda");
  a = valid_args();
  a.ldb = 4;  // B's rows hold N = 5
  EXPECT_EQ(rejected_argument(a), "ldb");
  a = valid_args();
  a.ldc = 4;
  EXPECT_EQ(rejected_argument(a), "ldc");
  a = valid_args();
  a.K = 0;
  a.lda = 0;  // as in BLAS, lda >= max(1, K)
  EXPECT_EQ(rejected_argument(a), "lda");
}

TEST(Arguments, EmptyProblemsAreValidNoOpsEvenWithNullPointers) {
  // M or N == 0: nothing is read or written, so nothing is needed (and no device either).
  auto a = valid_args();
  a.M = 0;
  a.A = nullptr;
  a.C = nullptr;
  EXPECT_NO_THROW(run_variant(default_variant(), a));
  a = valid_args();
  a.N = 0;
  a.B = nullptr;
  a.C = nullptr;
  EXPECT_NO_THROW(run_variant(default_variant(), a));
}

TEST(Arguments, KZeroNeedsNoAOrB) {
  auto a = valid_args();
  a.K = 0;
  a.lda = 1;
  a.A = nullptr;
  a.B = nullptr;
  EXPECT_NO_THROW(validate(a));
}

// Checked before any device is needed, so on every machine.
TEST(Arguments, ATuningBudgetBelowZeroOrNotANumberIsNamed) {
  for (const double budget : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    Options options;
    options.tune_budget_ms = budget;
    try {
      autotune(64, 64, 64, options);
      ADD_FAILURE() << budget << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "tune_budget_ms") << e.what();
    }
    EXPECT_THROW(gemm(valid_args(), nullptr, options), InvalidArgument) << budget;
  }
}

// A problem given to autotune() states its alignment class; leading dimensions that break it
// describe rows that gemm() would never put in that class, and that its kernels would misread.
TEST(Arguments, AnAlignmentClassItsLeadingDimensionsBreakIsNamed) {
  std::string message;
  auto refused = [&message](std::int64_t lda, std::int64_t ldb, std::int64_t ldc, int alignment) {
    Problem p = Problem::dense(64, 64, 64, 4);
    p.lda = lda;
    p.ldb = ldb;
    p.ldc = ldc;
    p.alignment = alignment;
    try {
      autotune(p);
    } catch (const InvalidArgument& e) {
      message = e.what();
      return e.argument();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::no_device) throw;
    }
    return std::string("<accepted>");
  };
  EXPECT_EQ(refused(66, 64, 64, 4), "alignment");
  EXPECT_NE(message.find("lda = 66"), std::string::npos) << message;
  EXPECT_EQ(refused(64, 65, 64, 2), "alignment");
  EXPECT_NE(message.find("ldb = 65"), std::string::npos) << message;
  EXPECT_EQ(refused(64, 64, 66, 4), "alignment");
  EXPECT_NE(message.find("ldc = 66"), std::string::npos) << message;
  EXPECT_EQ(refused(64, 64, 64, 3), "alignment");
  if (device_count() == 0) {
    EXPECT_EQ(refused(66, 66, 66, 2), "<accepted>");
    EXPECT_EQ(refused(65, 67, 69, 1), "<accepted>");
  }
}

TEST(Arguments, TheDefaultTuningBudgetIsTwoSecondsUnlessTheEnvironmentSaysOtherwise) {
  const char* set = std::getenv("TILEMM_TUNE_BUDGET_MS");
  if (set == nullptr) {
    EXPECT_EQ(Options().tune_budget_ms, Options::kDefaultTuneBudgetMs);
  }
  EXPECT_GE(Options::budget_from_environment(), 0.0);
}

TEST(ArgumentsOnDevice, RejectedCallLeavesCUntouched) {
  TILEMM_REQUIRE_DEVICE();
  testing::DeviceBuffer A(12), B(15), C(20);
  std::vector<float> sentinel(20, 7.0f);
  C.upload(sentinel);
  GemmArgs a = valid_args();
  a.A = A.get();
  a.B = B.get();
  a.C = C.get();
  a.ldb = 4;
  EXPECT_THROW(run_variant(default_variant(), a), InvalidArgument);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(C.download(), sentinel);
}

TEST(ArgumentsOnDevice, KZeroScalesCByBetaAndBetaZeroIgnoresNaN) {
  TILEMM_REQUIRE_DEVICE();
  int ran = 0;
  for (const auto& v : variant_space()) {
    GemmArgs probe = valid_args();
    probe.K = 0;
    probe.lda = 1;
    if (!can_run(v, current_device(), probe.problem())) continue;  // float4 variants: N = 5
    ++ran;
    testing::DeviceBuffer C(20);
    std::vector<float> c0(20);
    for (int i = 0; i < 20; ++i) c0[i] = static_cast<float>(i) - 9.5f;
    C.upload(c0);
    GemmArgs a = valid_args();
    a.K = 0;
    a.lda = 1;
    a.A = nullptr;
    a.B = nullptr;
    a.C = C.get();
    a.beta = -2.0f;
    run_variant(v, a);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto out = C.download();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(out[i], -2.0f * c0[i]) << variant_name(v) << " " << i;

    C.upload(std::vector<float>(20, std::numeric_limits<float>::quiet_NaN()));
    a.beta = 0.0f;
    run_variant(v, a);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    out = C.download();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(out[i], 0.0f) << variant_name(v) << " " << i;
  }
  EXPECT_GT(ran, 8);
}

}  // namespace
}  // namespace tilemm
