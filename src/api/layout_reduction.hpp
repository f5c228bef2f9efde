// How a BLAS-style call (a layout and an op per operand) becomes the row-major, non-transposed
// problem C' = A' B' that the kernels compute. Arithmetic on shapes only: no pointers, no device,
// so every layout x op combination is tested on the CPU.
//
// The decision follows from the layout and the ops alone. It must never be inferred from the
// shapes: a square operand and its transpose have the same shape.
#pragma once

#include <cstdint>

#include "tilemm/blas.hpp"

namespace tilemm::detail {

// One stored matrix seen as row-major: `rows` x `cols`, so its leading dimension must be
// >= max(1, cols).
struct RowMajorView {
  std::int64_t rows = 0, cols = 0;
};

// The row-major view of the storage of a logical r x c operand: r x c when it is row-major and
// not transposed; c x r when it is transposed or column-major (whose row-major view is the
// transpose); r x c again when both, since they cancel.
RowMajorView stored_view(Layout layout, Op op, std::int64_t r, std::int64_t c);

enum class CallerOperand { a, b };

// Where one operand of the row-major problem comes from.
struct ReducedOperand {
  CallerOperand source;  // the caller's matrix that holds it
  RowMajorView stored;   // that matrix's storage, viewed row-major
  // The storage is the transpose of what the kernel reads, so a transposed copy is made first.
  bool copy_transposed = false;
};

struct RowMajorReduction {
  std::int64_t M = 0, N = 0, K = 0;  // C' (M x N) = A' (M x K) B' (K x N)
  ReducedOperand a, b;               // A' and B'
  // Column-major calls: C' is the caller's C viewed row-major, which is C^T (N x M), computed as
  // C^T = op(B)^T op(A)^T; so A' comes from the caller's B and B' from the caller's A.
  bool swapped = false;
};

// The row-major problem that C = alpha op(A) op(B) + beta C (M x N x K) in `layout` is.
// Expects valid enums (the caller checks them).
RowMajorReduction reduce_to_row_major(Layout layout, Op op_a, Op op_b, std::int64_t M,
                                      std::int64_t N, std::int64_t K);

}  // namespace tilemm::detail
