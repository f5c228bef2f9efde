// What the families that run on aligned copies of A and B share (`padded` on warptile.cu,
// `tf32wgmmapad` on tf32wgmma.cu): each template, with ALIGNED_COPIES 1, has a <name>_copy kernel
// that copies a matrix into rows of a multiple of 32 floats, zero beyond its columns, so that odd
// leading dimensions (N = 4097, say) get the kernels that need 16-byte aligned rows; C stays the
// caller's. The copies go first in the family's workspace.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "family.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::detail {

// The leading dimension of a copy of rows of n floats: n rounded up to 32 floats, so that every
// row starts on a 128-byte boundary. 16 bytes would do for the float4 loads, cp.async and TMA;
// 16 bytes off that boundary, a row's 128-byte runs (a TMA box row of BK 32, a warp's loads)
// straddle two cache lines (what that cost tf32wgmma: docs/kernels.md, tf32wgmmapad).
std::int64_t copy_ld(std::int64_t n);

// The bytes of the copies: A (M x copy_ld(K)), then B (K x copy_ld(N)).
std::size_t aligned_copies_bytes(const Problem& p);

// Makes `f` a family that runs on the copies, what `padded` and `tf32wgmmapad` share: any
// alignment, the template compiled with ALIGNED_COPIES=1 and its "_copy" kernel loaded, the
// copies as the workspace (a family whose kernel needs more sets workspace_bytes after), and the
// pruning hint that keeps it out of aligned problems, where the kernels the copies are for run on
// the caller's matrices. The family's enqueue calls enqueue_aligned_copies first.
void run_on_aligned_copies(Family& f);

// Enqueues the copies of r.args's A and B into the start of r.workspace on r.stream, and returns
// r.args with A, lda, B and ldb those of the copies.
GemmArgs enqueue_aligned_copies(const LaunchRequest& r);

}  // namespace tilemm::detail
