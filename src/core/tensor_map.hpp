// Tensor maps for the tensor memory accelerator (TMA): the descriptor a kernel's
// cp.async.bulk.tensor reads a global tile through. Encoded on the host by the driver's
// cuTensorMapEncodeTiled, reached through the runtime (cudaGetDriverEntryPointByVersion) so that
// the library links no driver library and starts on machines without one.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tilemm::detail {

// How a box lands in shared memory: with the 128-byte swizzle (16-byte chunk c of row r at chunk
// c ^ (r % 8); the box's rows must be 128 bytes, the layout wgmma's descriptors read), or dense,
// row after row, as the matrix lies in memory.
enum class BoxLayout { swizzled_128b, dense };

// The map of a row-major FP32 matrix of `rows` x `cols` (>= 1 each) with leading dimension `ld`
// floats, read in boxes of box_rows x box_cols (each at most 256; box_cols * 4 a multiple of 16
// bytes, and 128 bytes for swizzled_128b); reads outside the matrix give zeros. `base` and ld * 4
// must be 16-byte aligned. Throws tilemm::Error (cuda) naming the call when the driver lacks the
// entry point or refuses the map.
CUtensorMap row_major_map(const float* base, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          int box_rows, int box_cols, BoxLayout layout);

}  // namespace tilemm::detail
