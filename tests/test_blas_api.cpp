// The cuBLAS-style API: argument checks on the CPU, layouts, transposes and batches against the
// float64 reference on the GPU, misaligned pointers, and the C interface.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <utility>

#include "gpu_test_support.hpp"
#include "rejected_argument.hpp"
#include "temp_dir.hpp"
#include "tilemm/tilemm.h"
#include "tilemm/tilemm.hpp"

namespace tilemm {
namespace {


using testing::rejected_argument;

float dummy[64];

TEST(BlasApiArguments, LeadingDimensionsFollowLayoutAndOp) {
  // 4 x 5 x 3. Row-major, A not transposed: A is 4 x 3, lda >= 3; transposed: stored 3 x 4, lda >= 4.
  auto call = [](Layout l, Op oa, Op ob, std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    return rejected_argument([&] { gemm(l, oa, ob, 4, 5, 3, 1.0f, dummy, lda, dummy, ldb, 0.0f, dummy, ldc); });
  };
  EXPECT_EQ(call(Layout::row_major, Op::none, Op::none, 2, 5, 5), "lda");
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 3, 5, 5), "lda");
  EXPECT_EQ(call(Layout::row_major, Op::none, Op::transpose, 3, 2, 5), "ldb");
  EXPECT_EQ(call(Layout::row_major, Op::none, Op::none, 3, 5, 4), "ldc");
  // Column-major: A (4 x 3) needs lda >= 4, B (3 x 5) ldb >= 3, C (4 x 5) ldc >= 4.
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 3, 3, 4), "lda");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 4, 2, 4), "ldb");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 4, 3, 3), "ldc");
  EXPECT_EQ(call(Layout::column_major, Op::transpose, Op::transpose, 2, 5, 4), "lda");
}

TEST(BlasApiArguments, BadEnumsDimensionsPointersAndBatches) {
  EXPECT_EQ(rejected_argument([] { gemm(static_cast<Layout>(7), Op::none, Op::none, 1, 1, 1, 1, dummy, 1, dummy, 1, 0, dummy, 1); }), "layout");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::row_major, static_cast<Op>(3), Op::none, 1, 1, 1, 1, dummy, 1, dummy, 1, 0, dummy, 1); }), "op_a");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::row_major, Op::none, Op::none, -1, 1, 1, 1, dummy, 1, dummy, 1, 0, dummy, 1); }), "M");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::column_major, Op::none, Op::none, 2, 2, 2, 1, nullptr, 2, dummy, 2, 0, dummy, 2); }), "A");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::column_major, Op::none, Op::none, 2, 2, 2, 1, dummy, 2, nullptr, 2, 0, dummy, 2); }), "B");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::row_major, Op::transpose, Op::none, 2, 2, 2, 1, dummy, 2, dummy, 2, 0, nullptr, 2); }), "C");
  EXPECT_EQ(rejected_argument([] { gemm(Layout::row_major, Op::none, Op::none, std::int64_t{1} << 31, 1, 1, 1, dummy, 1, dummy, 1, 0, dummy, 1); }), "M");
  auto batched = [](std::int64_t sa, std::int64_t sc, std::int64_t count) {
    return rejected_argument([&] {
      gemm_strided_batched(Layout::row_major, Op::none, Op::none, 2, 3, 4, 1, dummy, 4, sa, dummy, 3, 12, 0, dummy, 3, sc, count);
    });
  };
  EXPECT_EQ(batched(8, 6, -1), "batch_count");
  EXPECT_EQ(batched(-8, 6, 2), "stride_a");
  EXPECT_EQ(batched(8, 5, 2), "stride_c");  // one C spans 2 * 3 = 6 elements
  EXPECT_EQ(batched(8, 6, 0), "<accepted>");  // nothing to do
}

// Empty problems read neither A nor B: a transposed operand's leading dimension is checked
// against its own storage only (tilemm-check found these rejected as the row-major A' and B').
TEST(BlasApiArguments, EmptyProblemsAcceptTheLeadingDimensionsOfTransposedOperands) {
  auto call = [](Layout l, Op oa, Op ob, std::int64_t M, std::int64_t N, std::int64_t K,
                 std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    try {
      gemm(l, oa, ob, M, N, K, 1.0f, dummy, lda, dummy, ldb, 0.5f, dummy, ldc);
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::no_device) throw;  // K == 0 scales C: that needs a device
    }
    return std::string("<accepted>");
  };
  // Row-major A^T stored K x M = 639 x 0: lda >= 1 suffices (the row-major A' would need 639).
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 0, 1, 639, 8, 3, 1), "<accepted>");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::transpose, 0, 3, 1129, 9, 5, 3), "<accepted>");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::transpose, 111, 0, 896, 114, 1, 111), "<accepted>");
  // K == 0: B^T stored N x K = 640 x 0, ldb >= 1 (the row-major B' would need 640).
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::transpose, 33, 640, 0, 48, 1, 640), "<accepted>");
  EXPECT_EQ(call(Layout::column_major, Op::transpose, Op::transpose, 34, 93, 0, 1, 93, 51), "<accepted>");
  // Still checked against their own storage.
  EXPECT_NE(call(Layout::row_major, Op::transpose, Op::none, 0, 1, 639, 0, 3, 1), "<accepted>");
}

// What a call is refused for; "<accepted>" where it passed every check and, on a machine
// without a GPU, failed only for want of a device.
std::string refused_or_no_device(const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'" + e.argument() + "'"), std::string::npos) << e.what();
    return e.argument();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::no_device) throw;
  }
  return "<accepted>";
}

// Every argument is checked on the caller's own names before a transpose is enqueued: the reach
// of each operand as the caller stores it, the options, and the batch strides.
TEST(BlasApiArguments, OperandsThatReachPast64BitOffsetsAreNamedAsTheCallerStoresThem) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 60;  // 16 rows that far apart reach 2^64 floats
  auto call = [](Layout l, Op oa, Op ob, std::int64_t M, std::int64_t N, std::int64_t K,
                 std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    return refused_or_no_device([&] { gemm(l, oa, ob, M, N, K, 1.0f, dummy, lda, dummy, ldb, 0.0f, dummy, ldc); });
  };
  // Transposed operands are copied first: their reach is the caller's lda / ldb, not the copy's.
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 4, 4, 16, kHuge, 4, 4), "lda");
  EXPECT_EQ(call(Layout::row_major, Op::none, Op::transpose, 4, 16, 4, 4, kHuge, 16), "ldb");
  // Column-major calls swap A and B; the name is still the caller's.
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 4, 16, 4, 4, kHuge, 4), "ldb");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 16, 4, 4, kHuge, 4, 16), "lda");
  EXPECT_EQ(call(Layout::column_major, Op::none, Op::none, 4, 16, 4, 4, 4, kHuge), "ldc");
  // An empty problem's operands are described the same way, and refused the same way.
  EXPECT_EQ(call(Layout::row_major, Op::none, Op::none, 16, 0, 4, kHuge, 1, 1), "lda");
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 16, 0, 4, kHuge, 1, 1), "lda");
  // Within reach: 4 rows 2^58 floats apart reach 2^60 floats; 4 rows 2^59 apart, 2^61.
  if (device_count() == 0) {
    EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 4, 4, 4, std::int64_t{1} << 58, 4, 4), "<accepted>");
  }
  EXPECT_EQ(call(Layout::row_major, Op::transpose, Op::none, 4, 4, 4, std::int64_t{1} << 59, 4, 4), "lda");
}

TEST(BlasApiArguments, InvalidOptionsAreRefusedBeforeAnyTransposeOrBatch) {
  Options budget;
  budget.tune_budget_ms = -1;
  Options precision;
  precision.precision = static_cast<Precision>(9);
  Options policy;
  policy.policy = static_cast<TunePolicy>(7);
  for (const auto& [options, field] : {std::pair<Options, std::string>{budget, "tune_budget_ms"},
                                       {precision, "precision"}, {policy, "policy"}}) {
    for (const Op op : {Op::none, Op::transpose})
      EXPECT_EQ(refused_or_no_device([&] {
                  gemm(Layout::column_major, op, op, 4, 4, 4, 1.0f, dummy, 4, dummy, 4, 0.0f, dummy, 4, nullptr, options);
                }),
                field);
    // Even a batched call with nothing to do says its options are wrong.
    EXPECT_EQ(refused_or_no_device([&] {
                gemm_strided_batched(Layout::row_major, Op::transpose, Op::none, 4, 4, 4, 1.0f, dummy, 4, 16, dummy, 4, 16,
                                     0.0f, dummy, 4, 16, 0, nullptr, options);
              }),
              field);
    Context context;
    EXPECT_EQ(refused_or_no_device([&] { context.gemm(4, 4, 4, 1.0f, dummy, 4, dummy, 4, 0.0f, dummy, 4, nullptr, options); }),
              field);
  }
}

TEST(BlasApiArguments, BatchesThatReachPast64BitOffsetsAreNamedByTheirStride) {
  auto batched = [](std::int64_t M, std::int64_t K, const float* A, std::int64_t sa, std::int64_t sb,
                    float* C, std::int64_t ldc, std::int64_t sc, std::int64_t count) {
    return refused_or_no_device([&] {
      gemm_strided_batched(Layout::row_major, Op::none, Op::none, M, 3, K, 1, A, std::max<std::int64_t>(K, 1), sa, dummy,
                           3, sb, 0, C, ldc, sc, count);
    });
  };
  constexpr std::int64_t k62 = std::int64_t{1} << 62;
  EXPECT_EQ(batched(2, 4, dummy, k62, 12, dummy, 3, 6, 4), "stride_a");
  EXPECT_EQ(batched(2, 4, dummy, 8, k62, dummy, 3, 6, 4), "stride_b");
  EXPECT_EQ(batched(2, 4, dummy, 8, 12, dummy, 3, k62, 4), "stride_c");
  EXPECT_EQ(batched(2, 4, dummy, 8, 12, dummy, 3, std::numeric_limits<std::int64_t>::max(), 3), "stride_c");
  // The last of 3 Cs 2^60 floats apart would end past 2^61 floats; of 2, before it.
  EXPECT_EQ(batched(2, 4, dummy, 8, 12, dummy, 3, std::int64_t{1} << 60, 3), "stride_c");
  if (device_count() == 0) {
    EXPECT_EQ(batched(2, 4, dummy, 8, 12, dummy, 3, std::int64_t{1} << 60, 2), "<accepted>");
  }
  // One C whose rows reach too far is named by ldc, not by the stride it is compared with.
  EXPECT_EQ(batched(10, 4, dummy, 8, 12, dummy, std::int64_t{1} << 61, 1000, 2), "ldc");
  // A null C is named as such, whatever its stride.
  EXPECT_EQ(batched(2, 4, dummy, 8, 12, nullptr, 3, 0, 2), "C");
  if (device_count() == 0) {
    // With K == 0 nothing of A or B is read, so their strides do not matter.
    EXPECT_EQ(batched(2, 0, nullptr, k62, k62, dummy, 3, 6, 4), "<accepted>");
    // Broadcast A (stride 0) reaches no further than one A.
    EXPECT_EQ(batched(2, 4, dummy, 0, 12, dummy, 3, 6, 1000), "<accepted>");
  }
}

// Outputs interleaved within rows share no element: batch i writes columns [i * stride_c,
// i * stride_c + N) of each ldc-wide row. Accepted where they fit side by side, refused where
// two batches' columns meet.
TEST(BlasApiArguments, BatchesSideBySideWithinTheRowsOfCAreAccepted) {
  auto batched = [](Layout layout, std::int64_t ldc, std::int64_t sc, std::int64_t count) {
    return refused_or_no_device([&] {
      // 2 x 3 outputs (3 x 2 column-major: its rows of the row-major view are 2 long).
      gemm_strided_batched(layout, Op::none, Op::none, 2, 3, 4, 1, dummy, 4, 8, dummy, 4, 12, 0, dummy, ldc, sc,
                           count);
    });
  };
  EXPECT_EQ(batched(Layout::row_major, 6, 2, 2), "stride_c");   // columns 0-2 and 2-4 meet
  EXPECT_EQ(batched(Layout::row_major, 8, 3, 3), "stride_c");   // the third ends at column 9 > 8
  EXPECT_EQ(batched(Layout::column_major, 4, 1, 2), "stride_c");  // rows of 2: 0-1 and 1-2 meet
  if (device_count() == 0) {
    EXPECT_EQ(batched(Layout::row_major, 6, 3, 2), "<accepted>");
    EXPECT_EQ(batched(Layout::row_major, 9, 3, 3), "<accepted>");
    EXPECT_EQ(batched(Layout::column_major, 4, 2, 2), "<accepted>");
  }
}

TEST(CApi, StatusesAndMessagesWithoutLaunching) {
  EXPECT_EQ(tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 4, 5, 3, 1.0f, dummy, 2, dummy, 5, 0.0f, dummy, 5, nullptr),
            TILEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tilemmGetLastErrorMessage()).find("'lda'"), std::string::npos) << tilemmGetLastErrorMessage();
  // Out-of-range enum values can only come from C (c_api_smoke.c checks them).
  EXPECT_EQ(tilemmSgemmStridedBatched(TILEMM_COL_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 2, 2, 2, 1.0f, dummy, 2, 4, dummy, 2, 4, 0.0f, dummy, 2, 1, 3, nullptr),
            TILEMM_STATUS_INVALID_VALUE);
  EXPECT_NE(std::string(tilemmGetLastErrorMessage()).find("'stride_c'"), std::string::npos);
  // Empty problems succeed everywhere, device or not.
  EXPECT_EQ(tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 0, 5, 3, 1.0f, nullptr, 3, nullptr, 5, 0.0f, nullptr, 5, nullptr),
            TILEMM_STATUS_SUCCESS);
  EXPECT_STREQ(tilemmGetStatusName(TILEMM_STATUS_NO_DEVICE), "TILEMM_STATUS_NO_DEVICE");
  if (device_count() == 0) {
    EXPECT_EQ(tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 4, 5, 3, 1.0f, dummy, 3, dummy, 5, 0.0f, dummy, 5, nullptr),
              TILEMM_STATUS_NO_DEVICE);
    char winner[8] = "x";
    EXPECT_EQ(tilemmAutotune(64, 64, 64, winner, sizeof winner, nullptr), TILEMM_STATUS_NO_DEVICE);
    EXPECT_NE(std::string(tilemmGetLastErrorMessage()).find("no CUDA device"), std::string::npos);
  }
}

// ---- GPU ----------------------------------------------------------------------------------

// Stores logical r x c matrix `m` (row-major, dense) as `layout` with op, leading dimension ld.
std::vector<float> store(const std::vector<float>& m, std::int64_t r, std::int64_t c, Layout layout,
                         Op op, std::int64_t ld) {
  const bool flipped = (layout == Layout::column_major) != (op == Op::transpose);
  const std::int64_t rows = flipped ? c : r;
  std::vector<float> out(static_cast<std::size_t>(rows * ld), 777.0f);
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      out[static_cast<std::size_t>(flipped ? j * ld + i : i * ld + j)] = m[static_cast<std::size_t>(i * c + j)];
  return out;
}

struct BlasCase {
  Layout layout;
  Op op_a, op_b;
  std::int64_t M, N, K, pad;
};

void PrintTo(const BlasCase& c, std::ostream* os) {
  *os << (c.layout == Layout::row_major ? "row" : "col") << (c.op_a == Op::none ? "N" : "T")
      << (c.op_b == Op::none ? "N" : "T") << " " << c.M << "x" << c.N << "x" << c.K << " pad " << c.pad;
}

class LayoutsAndOps : public ::testing::TestWithParam<BlasCase> {};

TEST_P(LayoutsAndOps, MatchFloat64Reference) {
  TILEMM_REQUIRE_DEVICE();
  const BlasCase c = GetParam();
  std::mt19937_64 rng(testing::fresh_seed());
  const auto a = testing::random_matrix(static_cast<std::size_t>(c.M * c.K), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(c.K * c.N), rng);
  const auto c0 = testing::random_matrix(static_cast<std::size_t>(c.M * c.N), rng);
  const float alpha = 0.75f, beta = -1.5f;
  const auto ref = testing::reference_gemm(c.M, c.N, c.K, alpha, a, c.K, b, c.N, beta, c0, c.N);

  const bool col = c.layout == Layout::column_major;
  const bool a_flip = col != (c.op_a == Op::transpose), b_flip = col != (c.op_b == Op::transpose);
  const std::int64_t lda = (a_flip ? c.M : c.K) + c.pad, ldb = (b_flip ? c.K : c.N) + c.pad;
  const std::int64_t ldc = (col ? c.M : c.N) + c.pad;
  const auto sa = store(a, c.M, c.K, c.layout, c.op_a, lda);
  const auto sb = store(b, c.K, c.N, c.layout, c.op_b, ldb);
  const auto sc = store(c0, c.M, c.N, c.layout, Op::none, ldc);
  testing::DeviceBuffer A(sa.size()), B(sb.size()), C(sc.size());
  A.upload(sa);
  B.upload(sb);
  C.upload(sc);
  gemm(c.layout, c.op_a, c.op_b, c.M, c.N, c.K, alpha, A.get(), lda, B.get(), ldb, beta, C.get(), ldc);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = C.download();
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < c.M; ++i)
    for (std::int64_t j = 0; j < c.N; ++j) {
      const float got = out[static_cast<std::size_t>(col ? j * ldc + i : i * ldc + j)];
      const double want = ref.value[static_cast<std::size_t>(i * c.N + j)];
      if (!(std::fabs(got - want) <= testing::tolerance(c.K, ref.magnitude[static_cast<std::size_t>(i * c.N + j)]))) ++wrong;
    }
  EXPECT_EQ(wrong, 0);
  // The padding of C is untouched.
  for (std::size_t i = 0; i < out.size(); ++i)
    if (sc[i] == 777.0f) {
      EXPECT_EQ(out[i], 777.0f) << i;
    }
}

std::vector<BlasCase> all_layouts_and_ops() {
  std::vector<BlasCase> cases;
  for (Layout l : {Layout::row_major, Layout::column_major})
    for (Op oa : {Op::none, Op::transpose})
      for (Op ob : {Op::none, Op::transpose}) {
        cases.push_back({l, oa, ob, 67, 45, 33, 0});
        cases.push_back({l, oa, ob, 300, 260, 129, 3});
        cases.push_back({l, oa, ob, 512, 384, 256, 0});
      }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, LayoutsAndOps, ::testing::ValuesIn(all_layouts_and_ops()));

TEST(StridedBatched, EveryBatchMatchesItsReference) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = 37, N = 29, K = 41, batches = 5;
  const std::int64_t sa = M * K + 7, sb = 0 /* one B for all */, sc = M * N + 3;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto a = testing::random_matrix(static_cast<std::size_t>(sa * batches), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
  const auto c0 = testing::random_matrix(static_cast<std::size_t>(sc * batches), rng);
  testing::DeviceBuffer A(a.size()), B(b.size()), C(c0.size());
  A.upload(a);
  B.upload(b);
  C.upload(c0);
  gemm_strided_batched(Layout::row_major, Op::none, Op::none, M, N, K, 1.25f, A.get(), K, sa, B.get(), N, sb, 0.5f, C.get(), N, sc, batches);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = C.download();
  for (std::int64_t i = 0; i < batches; ++i) {
    const std::vector<float> ai(a.begin() + i * sa, a.begin() + i * sa + M * K);
    const std::vector<float> ci(c0.begin() + i * sc, c0.begin() + i * sc + M * N);
    const auto ref = testing::reference_gemm(M, N, K, 1.25f, ai, K, b, N, 0.5f, ci, N);
    for (std::int64_t e = 0; e < M * N; ++e)
      ASSERT_LE(std::fabs(out[static_cast<std::size_t>(i * sc + e)] - ref.value[static_cast<std::size_t>(e)]),
                testing::tolerance(K, ref.magnitude[static_cast<std::size_t>(e)]))
          << "batch " << i << " element " << e;
    for (std::int64_t e = M * N; e < sc; ++e)  // the gap between batches is untouched
      ASSERT_EQ(out[static_cast<std::size_t>(i * sc + e)], c0[static_cast<std::size_t>(i * sc + e)]);
  }
}

// Interleaved outputs: each batch's C is N columns of every row, stride_c apart within rows of
// ldc; the columns between and after them stay untouched.
TEST(StridedBatched, BatchesSideBySideWithinRowsMatchTheirReferences) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = 37, N = 29, K = 41, batches = 3, sc = N + 1, ldc = batches * sc + 2;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto a = testing::random_matrix(static_cast<std::size_t>(M * K * batches), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
  const auto c0 = testing::random_matrix(static_cast<std::size_t>(M * ldc), rng);
  testing::DeviceBuffer A(a.size()), B(b.size()), C(c0.size());
  A.upload(a);
  B.upload(b);
  C.upload(c0);
  gemm_strided_batched(Layout::row_major, Op::none, Op::none, M, N, K, 1.25f, A.get(), K, M * K, B.get(), N, 0, 0.5f,
                       C.get(), ldc, sc, batches);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = C.download();
  std::vector<bool> written(out.size(), false);
  for (std::int64_t i = 0; i < batches; ++i) {
    const std::vector<float> ai(a.begin() + i * M * K, a.begin() + (i + 1) * M * K);
    const auto ref = testing::reference_gemm(M, N, K, 1.25f, ai, K, b, N, 0.5f,
                                             std::vector<float>(c0.begin() + i * sc, c0.end()), ldc);
    for (std::int64_t row = 0; row < M; ++row)
      for (std::int64_t col = 0; col < N; ++col) {
        const auto at = static_cast<std::size_t>(row * ldc + i * sc + col);
        const auto e = static_cast<std::size_t>(row * N + col);
        ASSERT_LE(std::fabs(out[at] - ref.value[e]), testing::tolerance(K, ref.magnitude[e]))
            << "batch " << i << " C[" << row << "][" << col << "]";
        written[at] = true;
      }
  }
  for (std::size_t at = 0; at < out.size(); ++at) {
    if (!written[at]) {
      ASSERT_EQ(out[at], c0[at]) << "element " << at << " between or after the batches";
    }
  }
}

// Two contexts side by side, each with its own cache file: the BLAS-style members tune the
// row-major problem a call reduces to into their own context's cache only, and compute it right.
TEST(ContextsOnDevice, BlasStyleMembersTuneIntoTheirOwnContextsCache) {
  TILEMM_REQUIRE_DEVICE();
  testing::TempDir dir;
  const auto settings_at = [&](const std::string& file, TunePolicy policy) {
    ContextSettings s;
    s.cache_path = dir.file(file);
    s.options.policy = policy;
    s.options.tune_budget_ms = 300;
    s.effort = TuneEffort::quick;
    return s;
  };
  Context a(settings_at("a.db", TunePolicy::tune_on_miss));
  Context b(settings_at("b.db", TunePolicy::tune_on_miss));
  std::mt19937_64 rng(testing::fresh_seed());

  // Column-major 72 x 56 x 40 through a: the row-major problem C^T = B^T A^T is 56 x 72 x 40.
  const std::int64_t M = 72, N = 56, K = 40;
  const auto am = testing::random_matrix(static_cast<std::size_t>(M * K), rng);
  const auto bm = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
  const auto cm = testing::random_matrix(static_cast<std::size_t>(M * N), rng);
  const auto ref = testing::reference_gemm(M, N, K, 1.0f, am, K, bm, N, 0.5f, cm, N);
  const auto sa = store(am, M, K, Layout::column_major, Op::none, M);
  const auto sb = store(bm, K, N, Layout::column_major, Op::none, K);
  const auto sc = store(cm, M, N, Layout::column_major, Op::none, M);
  testing::DeviceBuffer A(sa.size()), B(sb.size()), C(sc.size());
  A.upload(sa);
  B.upload(sb);
  C.upload(sc);
  a.gemm(Layout::column_major, Op::none, Op::none, M, N, K, 1.0f, A.get(), M, B.get(), K, 0.5f,
         C.get(), M);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = C.download();
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      ASSERT_LE(std::fabs(out[static_cast<std::size_t>(j * M + i)] -
                          ref.value[static_cast<std::size_t>(i * N + j)]),
                testing::tolerance(K, ref.magnitude[static_cast<std::size_t>(i * N + j)]))
          << i << ", " << j;
  EXPECT_GE(a.tunings_run(), 1u);
  EXPECT_EQ(b.tunings_run(), 0u);

  // Two row-major batches of 36 x 28 x 20 through b.
  const std::int64_t m = 36, n = 28, k = 20, batches = 2;
  testing::DeviceBuffer BA(static_cast<std::size_t>(m * k * batches)),
      BB(static_cast<std::size_t>(k * n * batches)), BC(static_cast<std::size_t>(m * n * batches));
  BA.upload(testing::random_matrix(static_cast<std::size_t>(m * k * batches), rng));
  BB.upload(testing::random_matrix(static_cast<std::size_t>(k * n * batches), rng));
  BC.upload(testing::random_matrix(static_cast<std::size_t>(m * n * batches), rng));
  b.gemm_strided_batched(Layout::row_major, Op::none, Op::none, m, n, k, 1.0f, BA.get(), k, m * k,
                         BB.get(), n, k * n, 0.0f, BC.get(), n, m * n, batches);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_GE(b.tunings_run(), 1u);

  // Each file holds its own context's result and not the other's.
  Context a_again(settings_at("a.db", TunePolicy::off));
  Context b_again(settings_at("b.db", TunePolicy::off));
  EXPECT_EQ(a_again.autotune(Problem::dense(N, M, K, 4)).source, ResultSource::cache);
  EXPECT_NE(b_again.autotune(Problem::dense(N, M, K, 4)).source, ResultSource::cache);
  EXPECT_EQ(b_again.autotune(Problem::dense(m, n, k, 4)).source, ResultSource::cache);
  EXPECT_NE(a_again.autotune(Problem::dense(m, n, k, 4)).source, ResultSource::cache);
}

TEST(Misaligned, PointerOffsetsOfOneTwoAndThreeFloatsGiveCorrectResults) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = 130, N = 132, K = 136;  // multiples of 4: only the pointers misalign
  for (int offset : {1, 2, 3}) {
    std::mt19937_64 rng(testing::fresh_seed());
    const auto a = testing::random_matrix(static_cast<std::size_t>(M * K), rng);
    const auto b = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
    const auto ref = testing::reference_gemm(M, N, K, 1.0f, a, K, b, N, 0.0f, {}, N);
    testing::DeviceBuffer A(a.size() + 4), B(b.size() + 4), C(static_cast<std::size_t>(M * N) + 4);
    std::vector<float> pa(a.size() + 4, 0.0f), pb(b.size() + 4, 0.0f);
    std::copy(a.begin(), a.end(), pa.begin() + offset);
    std::copy(b.begin(), b.end(), pb.begin() + offset);
    A.upload(pa);
    B.upload(pb);
    gemm(M, N, K, 1.0f, A.get() + offset, K, B.get() + offset, N, 0.0f, C.get() + offset, N);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "offset " << offset;
    const auto out = C.download();
    std::int64_t wrong = 0;
    for (std::int64_t e = 0; e < M * N; ++e)
      if (!(std::fabs(out[static_cast<std::size_t>(e + offset)] - ref.value[static_cast<std::size_t>(e)]) <=
            testing::tolerance(K, ref.magnitude[static_cast<std::size_t>(e)])))
        ++wrong;
    EXPECT_EQ(wrong, 0) << "offset " << offset;
  }
}

TEST(Streams, AStreamOfAnotherDeviceIsRejected) {
  TILEMM_REQUIRE_DEVICE();
  if (device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaStreamCreate(&other), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  testing::DeviceBuffer A(16), B(16), C(16);
  EXPECT_EQ(rejected_argument([&] { gemm(4, 4, 4, 1.0f, A.get(), 4, B.get(), 4, 0.0f, C.get(), 4, other); }), "stream");
  cudaStreamDestroy(other);
}

TEST(CApiOnDevice, SgemmAndAutotuneThroughTheCInterface) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = 70, N = 50, K = 90;
  std::mt19937_64 rng(testing::fresh_seed());
  const auto a = testing::random_matrix(static_cast<std::size_t>(M * K), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
  const auto ref = testing::reference_gemm(M, N, K, 2.0f, a, K, b, N, 0.0f, {}, N);
  // Column-major storage of the same logical matrices, through the C API.
  const auto sa = store(a, M, K, Layout::column_major, Op::none, M);
  const auto sb = store(b, K, N, Layout::column_major, Op::none, K);
  testing::DeviceBuffer A(sa.size()), B(sb.size()), C(static_cast<std::size_t>(M * N));
  A.upload(sa);
  B.upload(sb);
  ASSERT_EQ(tilemmSgemm(TILEMM_COL_MAJOR, TILEMM_OP_N, TILEMM_OP_N, M, N, K, 2.0f, A.get(), M, B.get(), K, 0.0f, C.get(), M, nullptr),
            TILEMM_STATUS_SUCCESS) << tilemmGetLastErrorMessage();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto out = C.download();
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      ASSERT_LE(std::fabs(out[static_cast<std::size_t>(j * M + i)] - ref.value[static_cast<std::size_t>(i * N + j)]),
                testing::tolerance(K, ref.magnitude[static_cast<std::size_t>(i * N + j)]));
  char winner[128] = {};
  double ms = 0;
  ASSERT_EQ(tilemmAutotune(M, N, K, winner, sizeof winner, &ms), TILEMM_STATUS_SUCCESS) << tilemmGetLastErrorMessage();
  EXPECT_NO_THROW(testing::candidate_precision(winner));  // a variant or a cuBLASLt algorithm
  EXPECT_GT(ms, 0.0);
}

}  // namespace
}  // namespace tilemm
