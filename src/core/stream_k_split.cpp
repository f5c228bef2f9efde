#include "stream_k_split.hpp"

#include <algorithm>
#include <limits>

#include "cuda_check.hpp"
#include "family.hpp"

namespace tilemm::detail {
std::int64_t stream_k_tiles(const Problem& p, int bm, int bn) {
  return static_cast<std::int64_t>(ceil_div(p.M, bm) * ceil_div(p.N, bn));
}

std::string stream_k_tiles_fit(const Problem& p, int bm, int bn) {
  if (stream_k_tiles(p, bm, bn) > std::numeric_limits<int>::max())
    return "with stream-K the tiles of C are numbered with 32 bits; this C has more";
  return {};
}

int stream_k_blocks(const Problem& p, int bm, int bn, int bk, int sm_count) {
  return stream_k::persistent_blocks(stream_k_tiles(p, bm, bn), static_cast<int>(ceil_div(p.K, bk)),
                                     sm_count);
}

std::size_t stream_k_workspace_bytes(const Problem& p, int bm, int bn, int bk, int sm_count) {
  const auto blocks = static_cast<std::size_t>(stream_k_blocks(p, bm, bn, bk, sm_count));
  return blocks * (static_cast<std::size_t>(bm) * static_cast<std::size_t>(bn) * sizeof(float) +
                   sizeof(int));
}

stream_k::WorkSplit stream_k_split(const LaunchRequest& r, int bm, int bn, int bk,
                                   LaunchGeometry& g) {
  const Problem& p = r.problem;
  stream_k::WorkSplit w{};
  w.tiles = stream_k_tiles(p, bm, bn);
  w.tiles_n = static_cast<int>(ceil_div(p.N, bn));
  w.ctas = stream_k_blocks(p, bm, bn, bk, r.device.sm_count);
  w.dp_tiles = stream_k::whole_tiles(w.tiles, w.ctas, static_cast<int>(ceil_div(p.K, bk)));
  w.partials = r.workspace;
  w.flags = reinterpret_cast<int*>(r.workspace + static_cast<std::size_t>(w.ctas) *
                                                     static_cast<std::size_t>(bm) *
                                                     static_cast<std::size_t>(bn));
  TILEMM_CUDA(
      cudaMemsetAsync(w.flags, 0, sizeof(int) * static_cast<std::size_t>(w.ctas), r.stream));
  g.grid[0] = static_cast<unsigned>(w.ctas);
  g.grid[1] = g.grid[2] = 1;
  return w;
}

}  // namespace tilemm::detail
