// The reduction of every layout x op combination to a row-major problem, on the CPU: which
// operand is copied transposed, whether A and B swap, and that following the reduction on the
// host gives op(A) op(B) for square, non-square and 1-wide shapes.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <vector>

#include "layout_reduction.hpp"

namespace tilemm::detail {
namespace {

struct Shape {
  std::int64_t M, N, K;
};

// Square (every operand is its own transpose's shape), M == K (A square), K == N (B square),
// non-square, and 1-wide in each dimension.
const Shape kShapes[] = {{4, 4, 4}, {5, 3, 5}, {3, 5, 5}, {3, 5, 7}, {7, 2, 3},
                         {1, 1, 1}, {1, 6, 4}, {6, 1, 4}, {6, 4, 1}, {1, 1, 5}, {5, 5, 1}};

std::string describe(Layout layout, Op op_a, Op op_b, const Shape& s) {
  std::ostringstream out;
  out << (layout == Layout::row_major ? "row-major " : "column-major ")
      << (op_a == Op::transpose ? "T" : "N") << (op_b == Op::transpose ? "T" : "N") << " "
      << s.M << "x" << s.N << "x" << s.K;
  return out.str();
}

template <typename F>
void for_every_call(F&& f) {
  for (Layout layout : {Layout::row_major, Layout::column_major})
    for (Op op_a : {Op::none, Op::transpose})
      for (Op op_b : {Op::none, Op::transpose})
        for (const Shape& s : kShapes) f(layout, op_a, op_b, s);
}

TEST(LayoutReduction, CopiesExactlyTheTransposedOperandsAndSwapsForColumnMajor) {
  for_every_call([](Layout layout, Op op_a, Op op_b, const Shape& s) {
    SCOPED_TRACE(describe(layout, op_a, op_b, s));
    const RowMajorReduction r = reduce_to_row_major(layout, op_a, op_b, s.M, s.N, s.K);
    const bool col = layout == Layout::column_major;
    EXPECT_EQ(r.swapped, col);
    EXPECT_EQ(r.M, col ? s.N : s.M);
    EXPECT_EQ(r.N, col ? s.M : s.N);
    EXPECT_EQ(r.K, s.K);
    EXPECT_EQ(r.a.source, col ? CallerOperand::b : CallerOperand::a);
    EXPECT_EQ(r.b.source, col ? CallerOperand::a : CallerOperand::b);
    const Op op_of_a_prime = col ? op_b : op_a, op_of_b_prime = col ? op_a : op_b;
    EXPECT_EQ(r.a.copy_transposed, op_of_a_prime == Op::transpose);
    EXPECT_EQ(r.b.copy_transposed, op_of_b_prime == Op::transpose);
    // What the kernel reads after the copy: A' is M' x K, B' is K x N'.
    const RowMajorView a_read = r.a.copy_transposed ? RowMajorView{r.a.stored.cols, r.a.stored.rows} : r.a.stored;
    const RowMajorView b_read = r.b.copy_transposed ? RowMajorView{r.b.stored.cols, r.b.stored.rows} : r.b.stored;
    EXPECT_EQ(a_read.rows, r.M);
    EXPECT_EQ(a_read.cols, r.K);
    EXPECT_EQ(b_read.rows, r.K);
    EXPECT_EQ(b_read.cols, r.N);
  });
}

// A logical rows x cols matrix stored as `layout` with `op` and leading dimension ld (padding
// filled with a value that would show if it were read).
std::vector<double> store(const std::vector<double>& m, std::int64_t rows, std::int64_t cols,
                          Layout layout, Op op, std::int64_t ld) {
  // Column-major storage of X is row-major storage of X^T; op == transpose stores op(X)^T.
  const bool flipped = (layout == Layout::column_major) != (op == Op::transpose);
  std::vector<double> out(static_cast<std::size_t>((flipped ? cols : rows) * ld), 1e6);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[static_cast<std::size_t>(flipped ? j * ld + i : i * ld + j)] = m[static_cast<std::size_t>(i * cols + j)];
  return out;
}

// The dense row-major matrix a kernel reads from a stored operand: as stored, or its transpose
// when the reduction says to copy it transposed.
std::vector<double> as_read(const std::vector<double>& stored, const ReducedOperand& operand,
                            std::int64_t ld) {
  const RowMajorView v = operand.stored;
  const std::int64_t rows = operand.copy_transposed ? v.cols : v.rows;
  const std::int64_t cols = operand.copy_transposed ? v.rows : v.cols;
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out[static_cast<std::size_t>(i * cols + j)] =
          operand.copy_transposed ? stored[static_cast<std::size_t>(j * ld + i)]
                                  : stored[static_cast<std::size_t>(i * ld + j)];
  return out;
}

TEST(LayoutReduction, FollowingTheReductionOnTheHostComputesOpAOpB) {
  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<int> small(-4, 4);  // integers: the products are exact
  for_every_call([&](Layout layout, Op op_a, Op op_b, const Shape& s) {
    SCOPED_TRACE(describe(layout, op_a, op_b, s));
    std::vector<double> a(static_cast<std::size_t>(s.M * s.K)), b(static_cast<std::size_t>(s.K * s.N));
    for (auto& x : a) x = small(rng);
    for (auto& x : b) x = small(rng);
    // The answer, from the logical matrices: C[i][j] = sum_k op(A)[i][k] op(B)[k][j].
    std::vector<double> want(static_cast<std::size_t>(s.M * s.N), 0.0);
    for (std::int64_t i = 0; i < s.M; ++i)
      for (std::int64_t j = 0; j < s.N; ++j)
        for (std::int64_t k = 0; k < s.K; ++k)
          want[static_cast<std::size_t>(i * s.N + j)] += a[static_cast<std::size_t>(i * s.K + k)] * b[static_cast<std::size_t>(k * s.N + j)];

    const std::int64_t lda = stored_view(layout, op_a, s.M, s.K).cols + 2;
    const std::int64_t ldb = stored_view(layout, op_b, s.K, s.N).cols + 1;
    const auto stored_a = store(a, s.M, s.K, layout, op_a, lda);
    const auto stored_b = store(b, s.K, s.N, layout, op_b, ldb);

    const RowMajorReduction r = reduce_to_row_major(layout, op_a, op_b, s.M, s.N, s.K);
    const bool a_from_a = r.a.source == CallerOperand::a;
    const auto a_read = as_read(a_from_a ? stored_a : stored_b, r.a, a_from_a ? lda : ldb);
    const auto b_read = as_read(a_from_a ? stored_b : stored_a, r.b, a_from_a ? ldb : lda);
    // C' = A' B', row-major M' x N'; for column-major it is C^T.
    for (std::int64_t i = 0; i < r.M; ++i)
      for (std::int64_t j = 0; j < r.N; ++j) {
        double c = 0.0;
        for (std::int64_t k = 0; k < r.K; ++k)
          c += a_read[static_cast<std::size_t>(i * r.K + k)] * b_read[static_cast<std::size_t>(k * r.N + j)];
        const std::int64_t ci = r.swapped ? j : i, cj = r.swapped ? i : j;
        ASSERT_EQ(c, want[static_cast<std::size_t>(ci * s.N + cj)]) << "C[" << ci << "][" << cj << "]";
      }
  });
}

TEST(LayoutReduction, StoredViewFlipsForTransposeOrColumnMajorButNotBoth) {
  EXPECT_EQ(stored_view(Layout::row_major, Op::none, 2, 3).rows, 2);
  EXPECT_EQ(stored_view(Layout::row_major, Op::transpose, 2, 3).rows, 3);
  EXPECT_EQ(stored_view(Layout::column_major, Op::none, 2, 3).rows, 3);
  EXPECT_EQ(stored_view(Layout::column_major, Op::transpose, 2, 3).rows, 2);
}

}  // namespace
}  // namespace tilemm::detail
