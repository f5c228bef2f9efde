#include "stream_k_split.hpp"

#include <algorithm>
#include <limits>

#include "cuda_check.hpp"

namespace tilemm::detail {
namespace {

std::int64_t blocks_for(std::int64_t tiles, std::int64_t sm_count) {
  return std::max<std::int64_t>(1, std::min({tiles, sm_count, kMaxStreamKBlocks}));
}

}  // namespace

std::string stream_k_tiles_fit(std::int64_t tiles) {
  if (tiles > std::numeric_limits<int>::max())
    return "with stream-K the tiles of C are numbered with 32 bits; this C has more";
  return {};
}

std::size_t stream_k_workspace_bytes(std::int64_t tiles, std::size_t tile_floats) {
  const auto blocks = static_cast<std::size_t>(blocks_for(tiles, kMaxStreamKBlocks));
  return blocks * (tile_floats * sizeof(float) + sizeof(int));
}

stream_k::WorkSplit stream_k_split(std::int64_t tiles, int tiles_n, int k_tiles, int sm_count,
                                   std::size_t tile_floats, float* workspace, cudaStream_t stream) {
  stream_k::WorkSplit w{};
  w.tiles = tiles;
  w.tiles_n = tiles_n;
  w.ctas = static_cast<int>(blocks_for(tiles, sm_count));
  w.dp_tiles = stream_k::whole_tiles(w.tiles, w.ctas, k_tiles);
  w.partials = workspace;
  w.flags = reinterpret_cast<int*>(workspace + static_cast<std::size_t>(w.ctas) * tile_floats);
  TILEMM_CUDA(cudaMemsetAsync(w.flags, 0, sizeof(int) * static_cast<std::size_t>(w.ctas), stream));
  return w;
}

}  // namespace tilemm::detail
