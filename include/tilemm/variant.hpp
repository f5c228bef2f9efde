// Kernel variants: a family plus one value for each of the family's parameters. The canonical
// name ("tiled_t32_p1") is the variant's identity everywhere: the kernel symbol in the CUBIN, log
// lines, the SQLite cache and JSON files. parse_variant(variant_name(v)) == v for every variant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tilemm/device.hpp"
#include "tilemm/precision.hpp"

namespace tilemm {

struct Variant {
  std::string family;                              // "naive", "tiled", ...
  std::vector<std::pair<std::string, int>> params;  // in the family's declared order

  // The value of parameter `key`; throws tilemm::Error if the family has no such parameter.
  int param(std::string_view key) const;
  bool operator==(const Variant& other) const {
    return family == other.family && params == other.params;
  }
  bool operator!=(const Variant& other) const { return !(*this == other); }
};

// "tiled_t32_p1": the family, then "_<key><value>" per parameter in declared order.
std::string variant_name(const Variant& v);

// The inverse of variant_name. Throws tilemm::InvalidArgument naming the bad part when `name`
// is not the canonical name of a variant of a known family with values from its space.
Variant parse_variant(const std::string& name);

// The names of all kernel families, in registry order.
std::vector<std::string> family_names();

// Every variant of one family / of all families, before any device or problem check.
std::vector<Variant> variant_space(const std::string& family);
std::vector<Variant> variant_space();

// The variant used when nothing better is known (no tuning result and tuning is off).
Variant default_variant();

// The precision `v` computes at: highest for the FP32 FFMA families, the tensor-core family's
// by its parameters. Throws InvalidArgument for an unknown family.
Precision precision_of(const Variant& v);

// The variants that compute at exactly `precision`, in registry order (variant_space(Precision::
// highest) is every FP32 FFMA variant, the space of tilemm before precision modes). The tuner
// tries them for a problem of that precision, and for high and medium the FP32 ones too.
std::vector<Variant> variant_space(Precision precision);

// The variant used for `precision` when nothing better is known: default_variant() for highest,
// a tensor-core variant for high and medium (sm_80+ only: a caller checks can_run, and falls
// back to default_variant(), which is more accurate, on older devices).
Variant default_variant(Precision precision);

// A GEMM problem as far as the choice of variant is concerned: its shape, leading dimensions
// and the alignment class of its pointers and leading dimensions.
struct Problem {
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  // Largest of 4, 2, 1 such that A, B, C are aligned to that many floats and lda, ldb, ldc are
  // multiples of it: a variant that loads float4 needs 4.
  int alignment = 1;
  // How accurately the products must be computed: which variants may serve it (can_run refuses
  // a less accurate one), and part of every cache key.
  Precision precision = Precision::highest;
  // Whether vendor-library candidates (cuBLASLt's algorithms) may serve it, beside tilemm's own
  // kernels: Options::vendor (TILEMM_VENDOR=off turns them off). Part of the dispatcher's key.
  bool vendor = true;

  // A problem with minimal leading dimensions (lda = K, ldb = ldc = N) whose pointers are
  // aligned to `alignment` floats; its alignment class is that, lowered to what the leading
  // dimensions allow (dense(257, 255, 129).alignment == 1).
  static Problem square(std::int64_t n, int alignment = 4) { return dense(n, n, n, alignment); }
  static Problem dense(std::int64_t M, std::int64_t N, std::int64_t K, int alignment = 4);
};

// The alignment class (4, 2 or 1) of a call's pointers and leading dimensions.
int alignment_class(const void* A, const void* B, const void* C, std::int64_t lda,
                    std::int64_t ldb, std::int64_t ldc);

struct Verdict {
  bool ok = true;
  std::string reason;  // empty when ok; otherwise why the variant cannot run this problem
  explicit operator bool() const { return ok; }
};

// Whether `v` can launch on `device` for `problem`: parameter constraints of the family, its
// precision (never less accurate than problem.precision: serves()), threads per block, shared
// memory, grid limits, alignment. Cheap (no CUDA call, no compile); the tuner and
// the dispatcher never compile or time what it rejects.
Verdict can_run(const Variant& v, const DeviceInfo& device, const Problem& problem);

}  // namespace tilemm
