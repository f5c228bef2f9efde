// The throughput tilemm reports for a GEMM (stored results, tables, JSON): 2 * M * N * K
// floating-point operations over the time taken.
#pragma once

#include "tilemm/variant.hpp"

namespace tilemm::detail {

// TFLOP/s of `problem` done in `ms` milliseconds; 0 when `ms` is not positive (no timing).
inline double tflops(const Problem& problem, double ms) {
  return ms > 0 ? 2.0 * static_cast<double>(problem.M) * static_cast<double>(problem.N) *
                      static_cast<double>(problem.K) / (ms * 1e-3) / 1e12
                : 0.0;
}

}  // namespace tilemm::detail
