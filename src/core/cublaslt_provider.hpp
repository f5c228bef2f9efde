// cuBLASLt's algorithms as candidates (candidate_provider.hpp). For a problem it asks
// cublasLtMatmulAlgoGetHeuristic for its top algorithms in the compute type of each precision the
// problem may be served at (highest: CUBLAS_COMPUTE_32F; medium: CUBLAS_COMPUTE_32F_FAST_TF32 and
// CUBLAS_COMPUTE_32F; high: CUBLAS_COMPUTE_32F only, the one that meets high's bound). tilemm is
// row-major, cuBLASLt column-major: C^T = B^T A^T, with the problem's leading dimensions and its
// alignment class as the heuristic's minimum alignments. An algorithm that needs a workspace takes
// it from tilemm's stream-ordered pool (launch.hpp) on each call, like the families' workspaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "candidate_provider.hpp"

namespace tilemm::detail {

// The most workspace one cuBLASLt call may use: the heuristic's limit, and what a call of an
// algorithm that needs one takes from the pool.
inline constexpr std::size_t kCublasLtWorkspaceBytes = std::size_t{32} << 20;
// How many algorithms the heuristic is asked for per compute type.
inline constexpr int kCublasLtHeuristicCount = 8;
// How many of the heuristic's split-K algorithms also bring the same algorithm with half and
// twice its split of K, and the largest split tried so.
inline constexpr int kCublasLtSplitSiblings = 2;
inline constexpr std::int64_t kCublasLtMostSplitK = 64;

std::unique_ptr<CandidateProvider> make_cublaslt_provider();

}  // namespace tilemm::detail
