// Every variant of the space against a float64 CPU reference, on fresh random data, with C
// poisoned before each run and every element (and the padding between rows) checked.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "gpu_test_support.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace {

struct Case {
  std::int64_t M, N, K;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // leading dimension beyond the minimum
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.M << "x" << c.N << "x" << c.K << " alpha " << c.alpha << " beta " << c.beta
      << " ld pads " << c.pad_a << "," << c.pad_b << "," << c.pad_c;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::ostringstream s;
  s << c.M << "x" << c.N << "x" << c.K;
  if (c.alpha != 1.0f || c.beta != 0.0f) s << "_scaled";
  if (c.pad_a || c.pad_b || c.pad_c) s << "_padded";
  return s.str();
}

constexpr float kPaddingSentinel = 12345.0f;

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, MatchesFloat64Reference) {
  TILEMM_REQUIRE_DEVICE();
  const Case c = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);

  const std::int64_t lda = std::max<std::int64_t>(1, c.K) + c.pad_a;
  const std::int64_t ldb = c.N + c.pad_b;
  const std::int64_t ldc = c.N + c.pad_c;
  const auto a = testing::random_matrix(static_cast<std::size_t>(c.M * lda), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(c.K * ldb), rng);
  auto c0 = testing::random_matrix(static_cast<std::size_t>(c.M * ldc), rng);
  for (std::int64_t i = 0; i < c.M; ++i)
    for (std::int64_t j = c.N; j < ldc; ++j) c0[i * ldc + j] = kPaddingSentinel;
  // beta == 0 must never read C: poison it with NaN so that a read shows up in the result.
  auto initial_c = c0;
  if (c.beta == 0.0f)
    for (std::int64_t i = 0; i < c.M; ++i)
      for (std::int64_t j = 0; j < c.N; ++j)
        initial_c[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();

  const auto ref = testing::reference_gemm(c.M, c.N, c.K, c.alpha, a, lda, b, ldb, c.beta, c0, ldc);

  testing::DeviceBuffer A(a.size()), B(b.size()), C(initial_c.size());
  A.upload(a);
  B.upload(b);
  GemmArgs args;
  args.M = c.M;
  args.N = c.N;
  args.K = c.K;
  args.alpha = c.alpha;
  args.A = A.get();
  args.lda = lda;
  args.B = B.get();
  args.ldb = ldb;
  args.beta = c.beta;
  args.C = C.get();
  args.ldc = ldc;

  const DeviceInfo& device = current_device();
  int checked_variants = 0;
  for (const auto& v : variant_space()) {
    const std::string name = variant_name(v);
    const Verdict verdict = can_run(v, device, args.problem());
    if (!verdict) {
      // Only an alignment mismatch may keep a variant from a valid problem this small.
      EXPECT_NE(verdict.reason.find("aligned"), std::string::npos) << name << ": " << verdict.reason;
      continue;
    }
    C.upload(initial_c);
    run_variant(v, args);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
    const auto out = C.download();
    std::int64_t bad = 0;
    std::ostringstream first;
    for (std::int64_t i = 0; i < c.M; ++i) {
      for (std::int64_t j = 0; j < ldc; ++j) {
        const float got = out[i * ldc + j];
        bool ok;
        double want;
        if (j >= c.N) {
          want = kPaddingSentinel;
          ok = got == kPaddingSentinel;
        } else {
          want = ref.value[i * c.N + j];
          ok = std::isfinite(got) &&
               std::fabs(got - want) <= testing::tolerance(c.K, ref.magnitude[i * c.N + j]);
        }
        if (!ok && bad++ < 5) first << " C[" << i << "][" << j << "]=" << got << " want " << want;
      }
    }
    EXPECT_EQ(bad, 0) << name << ": " << bad << " wrong elements;" << first.str();
    ++checked_variants;
  }
  EXPECT_GT(checked_variants, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, EveryVariant,
    ::testing::Values(Case{1, 1, 1}, Case{1, 1000, 1}, Case{33, 65, 17}, Case{127, 129, 131},
                      Case{1000, 1000, 1000}, Case{1024, 1024, 1024}, Case{2049, 31, 4099},
                      Case{65, 33, 257, 1.5f, -0.75f}, Case{127, 129, 131, -0.5f, 2.0f},
                      Case{33, 65, 17, 1.0f, 0.0f, 3, 5, 7},
                      Case{257, 255, 129, 0.75f, 1.25f, 1, 2, 3},
                      Case{1000, 1000, 1000, 2.0f, 0.5f, 4, 4, 4},
                      // Alignment class 4 (the float4 variants run) at sizes off every tile.
                      Case{96, 80, 72}, Case{260, 196, 132}, Case{516, 1028, 36, 0.5f, -1.0f},
                      Case{4, 4, 4}, Case{4, 8, 1000}, Case{1004, 12, 4}),
    case_name);

TEST(KernelLibrary, SecondLaunchOfAVariantCompilesNothing) {
  TILEMM_REQUIRE_DEVICE();
  testing::DeviceBuffer A(64 * 64), B(64 * 64), C(64 * 64);
  std::mt19937_64 rng(testing::fresh_seed());
  A.upload(testing::random_matrix(64 * 64, rng));
  B.upload(testing::random_matrix(64 * 64, rng));
  GemmArgs args;
  args.M = args.N = args.K = 64;
  args.A = A.get();
  args.B = B.get();
  args.C = C.get();
  args.lda = args.ldb = args.ldc = 64;
  const Variant v = parse_variant("tiled_t8_p1");
  run_variant(v, args);
  const auto after_first = detail::nvrtc_compile_count();
  for (int i = 0; i < 3; ++i) run_variant(v, args);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(detail::nvrtc_compile_count(), after_first);
}

}  // namespace
}  // namespace tilemm
