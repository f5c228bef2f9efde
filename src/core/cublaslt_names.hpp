// The canonical names of cuBLASLt candidates: every field of the algorithm's configuration, so
// that the name alone restores it (cublasLtMatmulAlgoInit plus one ConfigSetAttribute per field)
// without asking the heuristic again, and the cuBLASLt version it was chosen with, so that
// another version's process does not serve it:
//   cublaslt_v<version>_m<compute>_a<algo>_t<tile>_s<stages>_k<splitK>_r<reduction>_w<swizzle>
//           _c<custom>_i<inner shape>_l<cluster shape>
// compute 0 is CUBLAS_COMPUTE_32F (true FP32: precision highest), 1 CUBLAS_COMPUTE_32F_FAST_TF32
// (one TF32 pass: medium). parse_cublaslt_name(cublaslt_name(c)) == c.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tilemm/precision.hpp"

namespace tilemm::detail {

struct CublasLtConfig {
  std::int64_t version = 0;
  int compute = 0;  // 0: 32F, 1: 32F_FAST_TF32
  std::int64_t algo = 0, tile = 0, stages = 0, split_k = 1, reduction = 0, swizzle = 0,
               custom = 0, inner = 0, cluster = 0;
  bool operator==(const CublasLtConfig& o) const;
};

inline constexpr const char* kCublasLtPrefix = "cublaslt";

std::string cublaslt_name(const CublasLtConfig& config);
// The configuration `name` spells, or nullopt with `why` set when it is not a canonical name.
std::optional<CublasLtConfig> parse_cublaslt_name(const std::string& name, std::string& why);
// highest for compute 0, medium for compute 1.
Precision cublaslt_precision(const CublasLtConfig& config);

}  // namespace tilemm::detail
