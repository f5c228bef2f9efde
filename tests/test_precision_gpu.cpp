// Precision modes on the GPU through gemm() and autotune(): each mode within its bound against a
// float64 reference, at shapes off every tile, and the tuned high winner a tensor-core kernel.
// (Every tf32mma variant on its own: EveryVariant in test_gpu_correctness.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "gemm_check.hpp"
#include "gpu_test_support.hpp"
#include "temp_dir.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm {
namespace {

// A private cache for this process, set before the library opens one.
const testing::TempDir& scratch_cache() {
  static const testing::TempDir dir;
  static const int set = setenv("TILEMM_CACHE", dir.file("tuning.db").c_str(), 1);
  (void)set;
  return dir;
}

struct Shape {
  std::int64_t M, N, K;
};

// 1-wide, primes, a 128 tile plus and minus one, small K (3xTF32's weak spot), and K large.
constexpr Shape kShapes[] = {{1, 1, 1},     {1, 257, 9},     {131, 1, 67},    {97, 89, 83},
                             {127, 129, 33}, {129, 127, 31}, {128, 128, 32},  {256, 192, 4},
                             {255, 257, 2049}};

TEST(PrecisionGpu, GemmInEachPrecisionStaysWithinItsBound) {
  TILEMM_REQUIRE_DEVICE();
  scratch_cache();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Shape& s : kShapes) {
    testing::DenseProblem problem(s.M, s.N, s.K, 1.25f, s.K % 2 == 0 ? 0.0f : -0.5f, rng);
    for (const Precision p : {Precision::highest, Precision::high, Precision::medium}) {
      Options options;
      options.policy = TunePolicy::off;  // the precision's default kernel: no tuning needed
      options.precision = p;
      const auto check = problem.check(
          problem.run([&](const GemmArgs& args) { gemm(args, nullptr, options); }), p);
      EXPECT_EQ(check.wrong, 0) << to_string(p) << " at " << s.M << "x" << s.N << "x" << s.K
                                << ", first " << check.first;
    }
  }
}

// High tunes its tensor-core kernels and the FP32 ones (the faster wins), and its entry is filed
// apart from highest's, which holds FP32 kernels only.
TEST(PrecisionGpu, HighTunesTensorCoreAndFp32KernelsFiledApartFromHighest) {
  TILEMM_REQUIRE_DEVICE();
  scratch_cache();
  if (current_device().cc_major < 8) GTEST_SKIP() << "TF32 tensor cores need compute capability 8.0";
  Options options;
  options.precision = Precision::high;
  const AutotuneResult high = autotune(1024, 1024, 1024, options);
  EXPECT_EQ(high.problem.precision, Precision::high);
  // A tensor-core kernel was verified and timed: kept to the end (ok) or dropped by a round of
  // the successive halving (pruned, with the times that dropped it); at 1024 the FP32 kernels
  // may well be the two finalists.
  bool timed_a_tensor_core_kernel = false;
  for (const auto& c : high.candidates) {
    const Precision offered = testing::candidate_precision(c.variant);
    EXPECT_TRUE(offered == Precision::high || offered == Precision::highest) << c.variant;
    const bool timed = c.status == CandidateStatus::ok ||
                       (c.status == CandidateStatus::pruned && c.stats.samples > 0);
    timed_a_tensor_core_kernel |= offered == Precision::high && timed;
  }
  EXPECT_TRUE(timed_a_tensor_core_kernel) << "winner " << high.winner;
  const AutotuneResult highest = autotune(1024, 1024, 1024);
  EXPECT_EQ(testing::candidate_precision(highest.winner), Precision::highest) << highest.winner;
  for (const auto& c : highest.candidates)
    EXPECT_EQ(testing::candidate_precision(c.variant), Precision::highest) << c.variant;
  // Served again from the cache, each from its own entry.
  EXPECT_EQ(autotune(1024, 1024, 1024, options).winner, high.winner);
  EXPECT_EQ(autotune(1024, 1024, 1024).winner, highest.winner);
}

}  // namespace
}  // namespace tilemm
