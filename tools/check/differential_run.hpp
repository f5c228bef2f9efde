// Runs one differential case on the current GPU: fills A, B and C (and everything around them)
// with random data, calls the case's entry point, and checks every element of C against a
// float64 reference within the rigorous FP32 rounding bound, and every float the call must not
// write (leading-dimension padding, the gaps between batches, the floats before the offset
// pointers, all of A and B) bit for bit unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "differential_case.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::check {

// The bound on |c - r| for an element whose float64 reference is r: every product and partial
// sum of a K-term dot product rounded once in FP32 (unit roundoff 2^-24), in any summation order
// of depth <= K, plus one rounding each for alpha, beta and the final add:
// (K + 2) * 2^-24 * (|alpha| * sum_k |a_ik b_kj| + |beta * c0_ij|); for precision high or
// medium plus the error of each product of that precision (tuner::product_error) times the same
// magnitude.
double error_bound(std::int64_t K, double magnitude, Precision precision = Precision::highest);

struct CaseOutcome {
  bool passed = false;
  std::int64_t elements_checked = 0;  // elements of C compared with the reference
  std::string failure;  // empty when passed: what was wrong, with the case's full description
};

// Runs case `c` through its entry point with `options` (the C API takes its options from the
// environment), checked within error_bound of options.precision. Never throws for a wrong result or a failed call: both are failures. Throws
// tilemm::Error only when the harness itself cannot run (no device, out of memory).
CaseOutcome run_case(const CaseSpec& c, const Options& options);

}  // namespace tilemm::check
