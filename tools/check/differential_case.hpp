// One case of the randomized differential check of tilemm's public GEMM entry points: which
// entry point, layout, ops, shape, leading dimensions, pointer offsets, scalars and batch
// layout. A case is drawn from (seed, index) alone, so any failure reproduces from those two
// numbers.
#pragma once

#include <cstdint>
#include <string>

#include "tilemm/blas.hpp"

namespace tilemm::check {

enum class EntryPoint {
  gemm_row_major,           // tilemm::gemm(M, N, K, ...)
  gemm_blas,                // tilemm::gemm(Layout, Op, Op, ...)
  gemm_strided_batched,     // tilemm::gemm_strided_batched(...)
  c_sgemm,                  // tilemmSgemm(...)
  c_sgemm_strided_batched,  // tilemmSgemmStridedBatched(...)
};
constexpr int kEntryPoints = 5;
const char* to_string(EntryPoint entry);
bool is_batched(EntryPoint entry);

struct CaseSpec {
  std::uint64_t seed = 0;  // the run's seed
  std::int64_t index = 0;  // the case's number in the run
  std::int64_t max_dim = 0;  // the limit it was drawn under (part of how to draw it again)
  EntryPoint entry = EntryPoint::gemm_row_major;
  Layout layout = Layout::row_major;
  Op op_a = Op::none, op_b = Op::none;
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  // Floats between the start of each allocation and the pointer the call gets (misalignment).
  std::int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t batch_count = 1;  // 1 for the entry points without batches
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;  // batched entry points only
};

struct DrawLimits {
  std::int64_t max_dim = 1500;
  // Largest M * N * K * batch_count drawn: bounds the float64 reference's CPU time per case.
  double max_work = 1e8;
};

// The `index`-th case of the run seeded with `seed`. Shapes come from 1, 2, 3, primes, squares,
// tile multiples and tile multiples +-1, with any dimension sometimes 1 (rarely 0), and often an
// operand that is square (M == K or K == N), the shapes where a transposed operand looks like
// its own transpose.
CaseSpec draw_case(std::uint64_t seed, std::int64_t index, const DrawLimits& limits = {});

// The storage of a logical rows x cols operand in `layout` with `op`, viewed row-major: how many
// rows of ld floats, each with `row_length` used. (Column-major storage of X is row-major
// storage of X^T; op == transpose means the stored matrix is op(X)^T.)
struct Storage {
  std::int64_t rows = 0, row_length = 0;
  bool flipped = false;  // element (i, j) of the logical operand is at j * ld + i
};
Storage storage_of(Layout layout, Op op, std::int64_t rows, std::int64_t cols);
// Floats from the first to one past the last element of one stored operand (0 when empty).
std::int64_t span_of(const Storage& s, std::int64_t ld);

// Every parameter of the case on one line, and how to run it again with tilemm-check.
std::string describe(const CaseSpec& c);

}  // namespace tilemm::check
