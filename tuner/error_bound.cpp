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
    // The kernels take one input's big part as TF32 rounding to nearest (rna: |x - big| <= 2^-11
    // |x|) and the other's as the tensor core's truncation of the raw FP32 value (tf32wgmma's
    // shared operand: |x - big| < 2^-10 |x|); small = rna(x - big) leaves r = x - big - small with
    // |r| <= 2^-11 |x - big|. For a rounded b and a truncated a the product big_a big_b +
    // big_a small_b + small_a big_b misses small_a small_b (<= 2^-21 |a b|), big_a r_b
    // (<= 2^-22), r_a big_b (<= 2^-21 (1 + 2^-11)) and terms below 2^-31: under 6 * 2^-22 in all.
    // Two rounded inputs miss less (3 * 2^-22).
    case Precision::high: return 24.0 * std::ldexp(1.0, -24);
    // One input rounded to nearest TF32 (11 significant bits: |x - tf32(x)| <= 2^-11 |x|), the
    // other truncated by the tensor core (< 2^-10 |x|): a product is off by less than
    // (2^-10 + 2^-11 + 2^-21) |a b|. Two rounded inputs: (2^-10 + 2^-22) |a b|.
    case Precision::medium: return std::ldexp(1.0, -10) + std::ldexp(1.0, -11) + std::ldexp(1.0, -21);
  }
  return 0.0;
}

}  // namespace tilemm::tuner
