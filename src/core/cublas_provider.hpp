// cuBLAS's cublasSgemm as a vendor candidate (candidate_provider.hpp): the call an application
// would otherwise make, with cuBLAS's own choice of kernel behind it, GEMV and split-K paths
// included, which cuBLASLt's heuristic does not always list. Its names:
//   cublas_v<version>_m<math>
// math 0 is CUBLAS_PEDANTIC_MATH (true FP32: precision highest), 1 CUBLAS_TF32_TENSOR_OP_MATH (one
// TF32 pass: medium); version is cuBLAS's (Cublas::version), so another version's process does
// not serve a stored one. parse_cublas_name(cublas_name(c)) == c.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "candidate_provider.hpp"
#include "tilemm/precision.hpp"

namespace tilemm::detail {

inline constexpr const char* kCublasPrefix = "cublas";
// The workspace a call gives cuBLAS: cuBLAS's own default is shared by every stream of a handle,
// and tilemm calls it from any stream. Each of the first kCublasKeptWorkspaces streams of a device
// to call it gets one, kept for the life of the process; later streams' calls take one from
// tilemm's stream-ordered pool (launch.hpp) each.
inline constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;
inline constexpr std::size_t kCublasKeptWorkspaces = 8;

struct CublasCall {
  std::int64_t version = 0;
  int math = 0;  // 0: pedantic FP32, 1: TF32 tensor ops
  bool operator==(const CublasCall& o) const { return version == o.version && math == o.math; }
};

std::string cublas_name(const CublasCall& call);
// The call `name` spells, or nullopt with `why` set when it is not a canonical name.
std::optional<CublasCall> parse_cublas_name(const std::string& name, std::string& why);
// highest for math 0, medium for math 1.
Precision cublas_precision(const CublasCall& call);

std::unique_ptr<CandidateProvider> make_cublas_provider();
// How many streams of `device` have a kept workspace now (at most kCublasKeptWorkspaces).
std::size_t cublas_kept_workspaces(int device);

}  // namespace tilemm::detail
