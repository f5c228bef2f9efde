// The host side of the stream-K work split (kernel_templates/stream_k.cuh), for the families whose
// kernels take one with STREAM_K 1 (tf32wgmma, streamk): its workspace, the blocks a call runs and
// the split their enqueue passes as the kernel's last parameter.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../kernel_templates/stream_k.cuh"

namespace tilemm::detail {

// The most persistent blocks one call runs, whatever the SM count: the workspace holds a partial
// tile and a flag for each.
inline constexpr std::int64_t kMaxStreamKBlocks = 256;

// Why a C of `tiles` tiles cannot be split (the kernels number tiles with 32 bits), or empty.
std::string stream_k_tiles_fit(std::int64_t tiles);

// The workspace of a call on `tiles` tiles of `tile_floats` floats each: a partial tile and a flag
// per block.
std::size_t stream_k_workspace_bytes(std::int64_t tiles, std::size_t tile_floats);

// How `tiles` tiles (`tiles_n` per row) of `k_tiles` K tiles each are shared among persistent
// blocks, one per SM at most (stream_k.cuh), with their partial tiles and flags in `workspace`
// (stream_k_workspace_bytes). Zeroes the flags on `stream` (checked), as the kernel expects.
stream_k::WorkSplit stream_k_split(std::int64_t tiles, int tiles_n, int k_tiles, int sm_count,
                                   std::size_t tile_floats, float* workspace, cudaStream_t stream);

}  // namespace tilemm::detail
