// Validation of a GEMM call's arguments, shared by every entry point.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "dimension_check.hpp"
#include "option_check.hpp"
#include "tilemm/error.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace detail {

namespace {

// The most floats an operand may reach: their byte offsets stay below 2^63.
constexpr std::int64_t kMaxFloats =
    std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(sizeof(float));

}  // namespace

void check_dimension(const char* name, std::int64_t value) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();
  if (value < 0)
    throw InvalidArgument(name, "must be >= 0, got " + std::to_string(value));
  if (value > kMaxDim)
    throw InvalidArgument(name, "is " + std::to_string(value) + ", above " +
                                    std::to_string(kMaxDim) + ", the largest dimension tilemm "
                                    "supports");
}

void check_reach(const char* name, std::int64_t ld, std::int64_t rows, const std::string& matrix) {
  if (rows > 0 && ld > kMaxFloats / rows)
    throw InvalidArgument(name, "is " + std::to_string(ld) + ": " + std::to_string(rows) +
                                    " rows of " + matrix + " that far apart would reach 2^61 "
                                    "floats, past 64-bit byte offsets");
}

std::int64_t span_of(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows > 0 && cols > 0 ? (rows - 1) * ld + cols : 0;
}

void check_batch_reach(const char* name, std::int64_t stride, std::int64_t count,
                       std::int64_t span, const std::string& matrix) {
  if (count > 1 && stride > 0 && count - 1 > (kMaxFloats - span) / stride)
    throw InvalidArgument(name, "is " + std::to_string(stride) + ": " + std::to_string(count) +
                                    " batches of " + matrix + " that far apart would reach 2^61 "
                                    "floats, past 64-bit byte offsets");
}

void check_options(const Options& options) {
  if (!(options.tune_budget_ms >= 0) || !std::isfinite(options.tune_budget_ms))
    throw InvalidArgument("tune_budget_ms", "must be a number of milliseconds >= 0 (0: the "
                                            "exhaustive search), got " +
                                                std::to_string(options.tune_budget_ms));
  if (!parse_precision(to_string(options.precision)))
    throw InvalidArgument("precision", "must be Precision::highest, high or medium, got " +
                                           std::to_string(static_cast<int>(options.precision)));
  if (options.policy != TunePolicy::tune_on_miss && options.policy != TunePolicy::off &&
      options.policy != TunePolicy::background)
    throw InvalidArgument("policy", "must be TunePolicy::tune_on_miss, off or background, got " +
                                        std::to_string(static_cast<int>(options.policy)));
}

}  // namespace detail

namespace {

void check_leading(const char* name, std::int64_t ld, std::int64_t row_length, std::int64_t rows,
                   const char* matrix) {
  const std::int64_t minimum = std::max<std::int64_t>(1, row_length);
  if (ld < minimum)
    throw InvalidArgument(name, "must be >= " + std::to_string(minimum) + " (the row length of " +
                                    matrix + ", row-major), got " + std::to_string(ld));
  detail::check_reach(name, ld, rows, matrix);
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
