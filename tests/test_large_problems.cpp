// Problems whose matrices hold more than 2^31 elements: every offset into A or C past 2^31 must
// be computed in 64 bits, and gemm() must split more rows than one grid can hold into slabs.
// A few sampled rows (the first, the last, those whose offsets cross 2^31 and the slab edge) are
// checked in full against a float64 reference. Needs ~10 GB of device memory; skipped with the
// reason where there is none or not enough.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <thread>

#include "gpu_test_support.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace {

// Uniform in [-1, 1) from a hash of (seed, index): filled on every core, reproducible per row.
float hashed_value(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<float>(static_cast<double>(z >> 40) * 0x1.0p-23 - 1.0);
}

std::vector<float> hashed_matrix(std::size_t count, std::uint64_t seed) {
  std::vector<float> m(count);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = count * t / threads; i < count * (t + 1) / threads; ++i)
        m[i] = hashed_value(seed, i);
    });
  for (auto& th : pool) th.join();
  return m;
}

struct LargeCase {
  std::int64_t M, N, K;
  const char* what;
};

void PrintTo(const LargeCase& c, std::ostream* os) {
  *os << c.M << "x" << c.N << "x" << c.K << " (" << c.what << ")";
}

class LargeProblem : public ::testing::TestWithParam<LargeCase> {};

// Runs the problem through `run` and checks the sampled rows; C starts as NaN (beta = 0).
void check_large(const LargeCase& c, const std::function<void(const GemmArgs&)>& run) {
  const std::size_t a_count = static_cast<std::size_t>(c.M * c.K);
  const std::size_t b_count = static_cast<std::size_t>(c.K * c.N);
  const std::size_t c_count = static_cast<std::size_t>(c.M * c.N);
  const std::size_t bytes = (a_count + b_count + c_count) * sizeof(float);
  std::size_t free_bytes = 0, total_bytes = 0;
  testing::cuda_ok(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (free_bytes < bytes + (std::size_t{2} << 30))
    GTEST_SKIP() << "needs " << (bytes >> 20) << " MiB of device memory, " << (free_bytes >> 20)
                 << " MiB free";

  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto a = hashed_matrix(a_count, seed);
  const auto b = hashed_matrix(b_count, seed ^ 0x5555);
  testing::DeviceBuffer A(a_count), B(b_count), C(c_count);
  A.upload(a);
  B.upload(b);
  testing::cuda_ok(cudaMemset(C.get(), 0xFF, c_count * sizeof(float)), "cudaMemset");  // NaN

  run(testing::dense_args(c.M, c.N, c.K, 1.5f, A.get(), B.get(), 0.0f, C.get()));
  testing::cuda_ok(cudaDeviceSynchronize(), "the GEMM");

  // Rows around 2^31 elements of A and of C, around gemm()'s slab edge, and at both ends.
  std::set<std::int64_t> rows = {0, 1, c.M / 2, c.M - 2, c.M - 1};
  for (std::int64_t edge : {(std::int64_t{1} << 31) / c.K, (std::int64_t{1} << 31) / c.N,
                            std::int64_t{65535} * 16})
    for (std::int64_t r = edge - 2; r <= edge + 2; ++r)
      if (r >= 0 && r < c.M) rows.insert(r);
  std::vector<float> got(static_cast<std::size_t>(c.N));
  std::int64_t bad = 0;
  std::string first;
  for (std::int64_t r : rows) {
    testing::cuda_ok(cudaMemcpy(got.data(), C.get() + r * c.N, got.size() * sizeof(float),
                                cudaMemcpyDeviceToHost),
                     "cudaMemcpy");
    for (std::int64_t j = 0; j < c.N; ++j) {
      double dot = 0.0, magnitude = 0.0;
      for (std::int64_t k = 0; k < c.K; ++k) {
        const double p = static_cast<double>(a[static_cast<std::size_t>(r * c.K + k)]) *
                         b[static_cast<std::size_t>(k * c.N + j)];
        dot += p;
        magnitude += std::fabs(p);
      }
      const double want = 1.5 * dot;
      const float value = got[static_cast<std::size_t>(j)];
      if (!(std::fabs(value - want) <= testing::tolerance(c.K, 1.5 * magnitude)) && bad++ == 0)
        first = "C[" + std::to_string(r) + "][" + std::to_string(j) + "] = " +
                std::to_string(value) + ", want " + std::to_string(want);
    }
  }
  EXPECT_EQ(bad, 0) << "of " << rows.size() << " sampled rows; first " << first;
}

// 64-bit offsets inside the kernels: a float4 warptile variant, called directly.
TEST_P(LargeProblem, WarptileKernelIsCorrect) {
  TILEMM_REQUIRE_DEVICE();
  check_large(GetParam(), [](const GemmArgs& args) {
    run_variant(parse_variant("warptile_bm128_bn64_bk16_wm64_wn32_tm8_tn4_v4_mb1"), args);
  });
}

// gemm() with tuning off: whatever it dispatches to (the nearest tuned shape's winner, if it can
// run the problem, or the default), row slabs included.
TEST_P(LargeProblem, GemmIsCorrect) {
  TILEMM_REQUIRE_DEVICE();
  Options off;
  off.policy = TunePolicy::off;
  check_large(GetParam(), [&](const GemmArgs& args) { gemm(args, nullptr, off); });
}

INSTANTIATE_TEST_SUITE_P(
    Over2To31Elements, LargeProblem,
    ::testing::Values(LargeCase{1100000, 36, 2000, "A of 2.2e9 elements, more rows than a grid"},
                      LargeCase{70000, 31000, 8, "C of 2.17e9 elements"}),
    [](const ::testing::TestParamInfo<LargeCase>& param) {
      return param.index == 0 ? std::string("LargeA") : std::string("LargeC");
    });

}  // namespace
}  // namespace tilemm
