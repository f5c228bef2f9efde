#include "layout_reduction.hpp"

namespace tilemm::detail {

RowMajorView stored_view(Layout layout, Op op, std::int64_t r, std::int64_t c) {
  const bool flipped = (layout == Layout::column_major) != (op == Op::transpose);
  return flipped ? RowMajorView{c, r} : RowMajorView{r, c};
}

RowMajorReduction reduce_to_row_major(Layout layout, Op op_a, Op op_b, std::int64_t M,
                                      std::int64_t N, std::int64_t K) {
  const ReducedOperand caller_a{CallerOperand::a, stored_view(layout, op_a, M, K),
                                op_a == Op::transpose};
  const ReducedOperand caller_b{CallerOperand::b, stored_view(layout, op_b, K, N),
                                op_b == Op::transpose};
  // Row-major: A' = op(A) is read straight from A's storage unless op transposes it. Column-major:
  // A' = op(B)^T, and the row-major view of column-major B is B^T, which is A' itself unless op
  // transposes B; likewise B' = op(A)^T. Either way an operand is copied exactly when its op is
  // transpose.
  if (layout == Layout::row_major) return {M, N, K, caller_a, caller_b, false};
  return {N, M, K, caller_b, caller_a, true};
}

}  // namespace tilemm::detail
