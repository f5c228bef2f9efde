// The error bound a candidate's result must meet to be accepted, per precision: one formula,
// for every verification (the tuner's GpuBench, tests, tilemm-bench). The derivation is in
// docs/tuning.md ("Verification bounds").
#pragma once

#include <cstdint>

#include "tilemm/precision.hpp"

namespace tilemm::tuner {

// u such that an element c of a candidate's C = A * B (alpha 1, beta 0) is accepted when
// |c - r| <= u * m, where r is the FP32 reference's element (the naive kernel: one FMA chain)
// and m the same element of |A| * |B|. Highest and high: 2 (K + 3) 2^-24, the FP32 bound for two
// results that each carry the rounding of a K-term FP32 sum (high must meet FP32's bound: that
// is what makes it FP32-accurate). Medium: that plus product_error(medium), the error of a product
// of two inputs taken as TF32. Cost: a few floating-point operations.
double error_bound_unit(Precision precision, std::int64_t K);

// The relative error of one product a*b that a kernel of `precision` adds to FP32's rounding,
// in units of the element of |A| |B| (summed over K it stays that, relative to the sum of |a b|):
// 0 for highest; 24 * 2^-24 for high (3xTF32 with one input's big part truncated: the omitted
// small_a * small_b and the rounding of each small part to TF32); 2^-10 + 2^-11 + 2^-21 for
// medium (one input rounded to TF32, the other truncated by the tensor core). The derivations
// are in error_bound.cpp. For checks against a float64 reference. Cost: none.
double product_error(Precision precision);

}  // namespace tilemm::tuner
