#include "warptile_tiles.hpp"

#include <cstdint>
#include <utility>

#include "split_k_worth.hpp"

namespace tilemm::detail {

WarptileTiles::WarptileTiles(const Variant& v)
    : bm(v.param("bm")),
      bn(v.param("bn")),
      bk(v.param("bk")),
      wm(v.param("wm")),
      wn(v.param("wn")),
      tm(v.param("tm")),
      tn(v.param("tn")),
      vec(v.param("v")) {}

std::string check_warptile_tiles(const Variant& v) {
  const WarptileTiles t(v);
  if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.wm <= 0 || t.wn <= 0 || t.tm <= 0 || t.tn <= 0)
    return "every tile size must be positive";
  if (t.vec != 1 && t.vec != 4)
    return "VEC is 1 (scalar, any alignment) or 4 (float4 accesses)";
  if (t.bm % t.wm != 0 || t.bn % t.wn != 0)
    return "the warp tile WM x WN must divide the block tile";
  const int threads = t.threads();
  if (threads != 128 && threads != 256)
    return "(BM/WM) * (BN/WN) warps must be 4 or 8: 128 or 256 threads per block";
  if (t.bm / t.wm < 2 || t.bn / t.wn < 2)
    return "at least 2 warps along M and along N: a 1-wide warp arrangement makes an elongated "
           "block tile that reuses one operand less for the same shared memory";
  const int outputs = t.wm * t.wn / 32;
  if (threads != 128 && outputs < 64)
    return "256 threads need >= 64 outputs per thread: 8 warps of 32 outputs compute the same "
           "tile as 4 warps of 64 with half the register reuse";
  if (outputs > 128)
    return "at most 128 accumulators per thread: more spill out of the 255 registers";
  if (t.tm != 4 && t.tm != 8) return "TM is 4 or 8: a multiple of 4 for LDS.128 fragments";
  if (t.tn != 4 && t.tn != 8) return "TN is 4 or 8: a multiple of 4 for LDS.128, and divides 32";
  if (t.tm * t.tn > 32)
    return "TM * TN <= 32: larger thread sub-tiles spread one fragment load over more than 32 "
           "banks, a 2-way shared-memory bank conflict";
  if (t.tn != 4 && t.wm <= t.wn)
    return "TN = 8 only for tall warp tiles (WM > WN), the one case where it needs fewer "
           "fragment loads per k (WM/TN + WN*TN/32 floats) than TN = 4";
  // The lanes of a warp form a TN x (32/TN) grid: sub-tiles are (TN*TM) x 32.
  if (t.wm % (t.tn * t.tm) != 0)
    return "WM must be a multiple of the warp sub-tile height TN * TM";
  if (t.wn % 32 != 0) return "WN must be a multiple of the warp sub-tile width 32";
  if (t.bk % t.vec != 0 || t.bk % 4 != 0) return "BK must be a multiple of 4 (and of VEC)";
  const int a_vecs_per_row = t.bk / t.vec;
  if (threads % a_vecs_per_row != 0 || t.bm % (threads / a_vecs_per_row) != 0)
    return "the A tile (BM x BK) must split into whole rows evenly among the threads";
  const int b_vecs_per_row = t.bn / t.vec;
  if (threads % b_vecs_per_row != 0 || t.bk % (threads / b_vecs_per_row) != 0)
    return "the B tile (BK x BN) must split into whole rows evenly among the threads";
  return {};
}

std::size_t warptile_shared_bytes(const Variant& v) {
  const WarptileTiles t(v);
  return 2 * static_cast<std::size_t>(t.bk) * static_cast<std::size_t>(t.bm + 4 + t.bn) *
         sizeof(float);
}

LaunchGeometry warptile_geometry(const Variant& v, const Problem& p) {
  const WarptileTiles t(v);
  LaunchGeometry g = grid_over_c(p.M, p.N, t.bm, t.bn, static_cast<unsigned>(t.threads()), 1);
  g.dynamic_shared_bytes = warptile_shared_bytes(v);
  return g;
}

int vec_alignment(const Variant& v) { return v.param("v"); }

int k_slices(const Variant& v) { return v.param("s"); }

LaunchGeometry split_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = warptile_geometry(v, p);
  g.grid_z64 = static_cast<std::uint64_t>(k_slices(v));
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  return g;
}

std::vector<ParamSpec> split_params(std::vector<int> slices) {
  return {{"bm", "BM", {64, 128}}, {"bn", "BN", {64, 128}}, {"bk", "BK", {16}},
          {"wm", "WM", {32, 64}},  {"wn", "WN", {32, 64}},  {"tm", "TM", {4, 8}},
          {"tn", "TN", {4}},       {"v", "VEC", {1, 4}},    {"s", "SPLIT_K", std::move(slices)}};
}

std::string check_split(const Variant& v) {
  if (k_slices(v) < 2) return "SPLIT_K must be at least 2 (1 is the warptile family)";
  return check_warptile_tiles(v);
}

std::string split_k_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p) {
  // Below one K tile (BK is at most 16) per slice, a slice has nothing of its own to multiply;
  // above it, even short slices can win (4- and 8-way splits of K = 255).
  constexpr std::int64_t kMinKPerSlice = 16;
  const int splits = k_slices(v);
  const LaunchGeometry g = warptile_geometry(v, p);
  if (std::string filled = unsplit_grid_fills_the_sms(g.grid_x64 * g.grid_y64, device.sm_count);
      !filled.empty())
    return filled;
  if (p.K / splits < kMinKPerSlice)
    return "K = " + std::to_string(p.K) + " in " + std::to_string(splits) +
           " slices leaves under " + std::to_string(kMinKPerSlice) + " per slice";
  return {};
}

}  // namespace tilemm::detail
