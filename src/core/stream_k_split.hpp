// The host side of the stream-K work split (kernel_templates/stream_k.cuh), for the families whose
// kernels take one with STREAM_K 1 (tf32wgmma, streamk): the tiles, the workspace, the blocks a
// call runs and the split their enqueue passes as the kernel's last parameter. A family gives its
// block tile (BM x BN of C, BK of K); every rule of the split is here or in the header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../kernel_templates/stream_k.cuh"
#include "family.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// The bm x bn tiles that cover the problem's C.
std::int64_t stream_k_tiles(const Problem& p, int bm, int bn);

// Why the problem's C cannot be split into bm x bn tiles (the kernels number tiles with 32 bits),
// or empty.
std::string stream_k_tiles_fit(const Problem& p, int bm, int bn);

// The persistent blocks of a call on `sm_count` SMs (stream_k::persistent_blocks).
int stream_k_blocks(const Problem& p, int bm, int bn, int bk, int sm_count);

// The workspace of a call on `sm_count` SMs: a bm x bn partial tile and a flag per block.
std::size_t stream_k_workspace_bytes(const Problem& p, int bm, int bn, int bk, int sm_count);

// How the bm x bn tiles (of bk K tiles each) of request `r` are shared among persistent blocks
// on r.device's SMs (stream_k_blocks), with their partial tiles and flags in r.workspace
// (stream_k_workspace_bytes for the same device). Sets `g`'s grid to those blocks and zeroes the
// flags on r.stream (checked), as the kernels expect.
stream_k::WorkSplit stream_k_split(const LaunchRequest& r, int bm, int bn, int bk,
                                   LaunchGeometry& g);

}  // namespace tilemm::detail
