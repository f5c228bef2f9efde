// Validation of a GEMM call's arguments, shared by every entry point.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "dimension_check.hpp"
#include "tilemm/error.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace detail {

void check_dimension(const char* name, std::int64_t value) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();
  if (value < 0)
    throw InvalidArgument(name, "must be >= 0, got " + std::to_string(value));
  if (value > kMaxDim)
    throw InvalidArgument(name, "is " + std::to_string(value) + ", above " +
                                    std::to_string(kMaxDim) + ", the largest dimension tilemm "
                                    "supports");
}

}  // namespace detail

namespace {

void check_leading(const char* name, std::int64_t ld, std::int64_t row_length, std::int64_t rows,
                   const char* matrix) {
  const std::int64_t minimum = std::max<std::int64_t>(1, row_length);
  if (ld < minimum)
    throw InvalidArgument(name, "must be >= " + std::to_string(minimum) + " (the row length of " +
                                    matrix + ", row-major), got " + std::to_string(ld));
  // rows * ld must stay addressable with 64-bit offsets.
  if (rows > 0 && ld > std::numeric_limits<std::int64_t>::max() / 4 / rows)
    throw InvalidArgument(name, "is " + std::to_string(ld) + ": " + matrix +
                                    " would span more than 2^61 bytes");
}

}  // namespace

Problem GemmArgs::problem() const {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  p.alignment = alignment_class(A, B, C, lda, ldb, ldc);
  return p;
}

void validate(const GemmArgs& a) {
  detail::check_dimension("M", a.M);
  detail::check_dimension("N", a.N);
  detail::check_dimension("K", a.K);
  check_leading("lda", a.lda, a.K, a.M, "A (M x K)");
  check_leading("ldb", a.ldb, a.N, a.K, "B (K x N)");
  check_leading("ldc", a.ldc, a.N, a.M, "C (M x N)");
  if (a.M > 0 && a.N > 0) {
    if (a.C == nullptr) throw InvalidArgument("C", "is null but M and N are nonzero");
    if (a.K > 0 && a.A == nullptr) throw InvalidArgument("A", "is null but M, N and K are nonzero");
    if (a.K > 0 && a.B == nullptr) throw InvalidArgument("B", "is null but M, N and K are nonzero");
  }
}

}  // namespace tilemm
