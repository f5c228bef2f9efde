// The cuBLAS-style entry points: layouts, transposes and strided batches, all served by the
// tuned row-major kernels.
//
//   C = alpha * op(A) * op(B) + beta * C,   op(A) is M x K, op(B) is K x N, C is M x N
//
// As in BLAS, a matrix is stored in `layout` with its leading dimension: for row-major storage
// the distance between rows (>= the number of columns stored), for column-major the distance
// between columns (>= the number of rows stored). op == Op::transpose means the stored matrix
// is the transpose: A is stored K x M, B is stored N x K.
//
// How it is computed (and why the cache key needs nothing more): a column-major call is the
// row-major problem C^T = op(B)^T op(A)^T (M and N swap); a transposed operand is first copied
// into its non-transposed row-major form (one memory-bound pass, stream-ordered scratch memory
// from cudaMallocAsync); the result is an ordinary row-major problem, dispatched like gemm().
// Its shape and problem class are the cache key: the same winner serves every layout and op.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tilemm/autotune.hpp"

namespace tilemm {

enum class Layout { row_major, column_major };
enum class Op { none, transpose };

// Throws InvalidArgument naming the argument (M, N, K, lda, ldb, ldc, A, B, C, stream) for bad
// input, before anything is launched; M, N or K == 0 is a no-op as in BLAS (K == 0: C = beta C).
// Asynchronous on `stream`. A transposed operand costs one extra pass over it and scratch
// memory of its size for the duration of the call.
void gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
          float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
          float beta, float* C, std::int64_t ldc, cudaStream_t stream = nullptr,
          const Options& options = {});

// batch_count independent GEMMs; matrix i starts at A + i * stride_a (likewise B, C). Strides
// are in elements and >= 0 (0 reuses one A or B for every batch); C's stride must keep the
// outputs from overlapping (InvalidArgument "stride_c" otherwise), since they are written
// concurrently. batch_count == 0 is a no-op.
void gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N,
                          std::int64_t K, float alpha, const float* A, std::int64_t lda,
                          std::int64_t stride_a, const float* B, std::int64_t ldb,
                          std::int64_t stride_b, float beta, float* C, std::int64_t ldc,
                          std::int64_t stride_c, std::int64_t batch_count,
                          cudaStream_t stream = nullptr, const Options& options = {});

}  // namespace tilemm
