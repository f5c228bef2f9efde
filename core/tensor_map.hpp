// Tensor maps for the tensor memory accelerator (TMA): the descriptor a kernel's
// cp.async.bulk.tensor reads a global tile through. Encoded on the host by the driver's
// cuTensorMapEncodeTiled, reached through the runtime (cudaGetDriverEntryPointByVersion) so that
// the library links no driver library and starts on machines without one.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tilemm::detail {

// The map of a row-major FP32 matrix of `rows` x `cols` (>= 1 each) with leading dimension `ld`
// floats, read in boxes of box_rows x box_cols (box_cols * 4 = 128 bytes) that land in shared
// memory with the 128-byte swizzle; reads outside the matrix give zeros. `base` and ld * 4 must be
// 16-byte aligned. Throws tilemm::Error (cuda) naming the call when the driver lacks the entry
// point or refuses the map.
CUtensorMap row_major_swizzled_map(const float* base, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld, int box_rows, int box_cols);

}  // namespace tilemm::detail
