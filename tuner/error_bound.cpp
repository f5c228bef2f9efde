#include "error_bound.hpp"

#include <cmath>

namespace tilemm::tuner {

double error_bound_unit(Precision precision, std::int64_t K) {
  // Both the candidate and the reference carry FP32 rounding of a K-term sum: twice the
  // single-result bound (K + 3) u, u = 2^-24.
  const double fp32 = 2.0 * static_cast<double>(K + 3) * std::ldexp(1.0, -24);
  // High must meet FP32's bound: that is what makes it FP32-accurate (the FP32 kernels, timed
  // beside the 3xTF32 ones, serve where no 3xTF32 candidate meets it).
  if (precision != Precision::medium) return fp32;
  return fp32 + product_error(Precision::medium);
}

double product_error(Precision precision) {
  switch (precision) {
    case Precision::highest: return 0.0;
    // big = tf32(x) and small = tf32(x - big): |x - big - small| <= 2^-11 |x - big| <= 2^-22 |x|.
    // The product big_a big_b + big_a small_b + small_a big_b misses small_a small_b
    // (<= 2^-22 |a b|) and the two residuals times the other input (<= 2^-22 |a b| each).
    case Precision::high: return 12.0 * std::ldexp(1.0, -24);
    // Each input rounded to nearest TF32 (11 significant bits): |x - tf32(x)| <= 2^-11 |x|, so
    // a product of two rounded inputs is off by at most (2 * 2^-11 + 2^-22) |a b|.
    case Precision::medium: return std::ldexp(1.0, -10) + std::ldexp(1.0, -22);
  }
  return 0.0;
}

}  // namespace tilemm::tuner
