// What a dispatch decision depends on: the device, the shape, its problem class and precision.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>

#include "tilemm/variant.hpp"

namespace tilemm::dispatch {

// Minimal leading dimensions: part of the problem class, so of the cache key.
inline bool dense_leading_dimensions(std::int64_t K, std::int64_t N, std::int64_t lda,
                                     std::int64_t ldb, std::int64_t ldc) {
  return lda == std::max<std::int64_t>(1, K) && ldb == std::max<std::int64_t>(1, N) &&
         ldc == std::max<std::int64_t>(1, N);
}
inline bool dense_leading_dimensions(const Problem& p) {
  return dense_leading_dimensions(p.K, p.N, p.lda, p.ldb, p.ldc);
}

// The class a problem is filed under in the cache: "a4-dense", "a1-strided", ...
std::string class_of(const Problem& p);

// "MxNxK (class)", or "MxNxK (class, precision)" for a precision other than highest: for log
// lines and the key of the tuning lease.
std::string describe(const Problem& p);

// Built without allocating, on every gemm() call.
struct ShapeKey {
  int device;
  std::int64_t M, N, K;
  int alignment;
  bool dense;
  Precision precision;
  bool vendor = true;  // Problem::vendor: a vendor winner is served only where it is true
  bool operator==(const ShapeKey& o) const {
    return device == o.device && M == o.M && N == o.N && K == o.K && alignment == o.alignment &&
           dense == o.dense && precision == o.precision && vendor == o.vendor;
  }
  bool operator<(const ShapeKey& o) const {
    return std::tie(device, M, N, K, alignment, dense, precision, vendor) <
           std::tie(o.device, o.M, o.N, o.K, o.alignment, o.dense, o.precision, o.vendor);
  }
};

inline ShapeKey key_of(int device, const Problem& p) {
  return {device,      p.M,         p.N, p.K, p.alignment, dense_leading_dimensions(p),
          p.precision, p.vendor};
}

struct ShapeKeyHash {
  std::size_t operator()(const ShapeKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.device);
    for (std::int64_t v : {k.M, k.N, k.K, std::int64_t{k.alignment}, std::int64_t{k.dense},
                           static_cast<std::int64_t>(k.precision), std::int64_t{k.vendor}})
      h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace tilemm::dispatch
