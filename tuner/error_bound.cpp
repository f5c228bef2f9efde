#include "error_bound.hpp"

#include <cmath>

namespace tilemm::tuner {

double error_bound_unit(Precision precision, std::int64_t K) {
  // Both the candidate and the reference carry FP32 rounding of a K-term sum: twice the
  // single-result bound (K + 3) u, u = 2^-24.
  const double fp32 = 2.0 * static_cast<double>(K + 3) * std::ldexp(1.0, -24);
  if (precision != Precision::medium) return fp32;
  // Each input rounded to nearest TF32 (11 significant bits): |x - tf32(x)| <= 2^-11 |x|, so a
  // product of two rounded inputs is off by at most (2 * 2^-11 + 2^-22) of |a b|; summed over K
  // terms that is (2^-10 + 2^-22) of the element of |A| |B|, on top of the FP32 accumulation.
  return fp32 + std::ldexp(1.0, -10) + std::ldexp(1.0, -22);
}

}  // namespace tilemm::tuner
