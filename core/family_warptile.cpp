// The warptile family (kernel_templates/warptile.cu): block, warp and thread tiles, VEC-wide
// global accesses. check() is the template's static_asserts, one for one and with the same
// reasons, so the space never holds a variant that fails to compile.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

struct Tiles {
  int bm, bn, bk, wm, wn, tm, tn, vec;
  explicit Tiles(const Variant& v)
      : bm(v.param("bm")),
        bn(v.param("bn")),
        bk(v.param("bk")),
        wm(v.param("wm")),
        wn(v.param("wn")),
        tm(v.param("tm")),
        tn(v.param("tn")),
        vec(v.param("v")) {}
  // Only meaningful once check() has passed.
  int threads() const { return (bm / wm) * (bn / wn) * 32; }
};

std::string check_tiles(const Variant& v) {
  const Tiles t(v);
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

// __launch_bounds__(256, 2): two blocks per SM need <= 128 registers per thread. The 256-thread
// tiles of 64 outputs per thread use ~140 unbounded, so one block runs per SM (8 warps) and each
// barrier idles the SM; bounded, they fit in 128 without spilling (the compile test checks).
std::string check_warptile(const Variant& v) {
  const int min_blocks = v.param("mb");
  if (min_blocks != 1 && min_blocks != 2) return "MIN_BLOCKS is 1 or 2";
  if (std::string why = check_tiles(v); !why.empty()) return why;
  const Tiles t(v);
  if (min_blocks == 2 && (t.threads() != 256 || t.wm * t.wn / 32 > 64 || t.vec != 4 ||
                          t.bm != 128 || t.bn != 128))
    return "MIN_BLOCKS = 2 only for 128x128 tiles of 256 threads with float4 loads: more "
           "outputs, scalar staging or the 256-row A tile do not fit 128 registers unspilled, "
           "and 128-thread blocks fit twice unbounded";
  return {};
}

int splits(const Variant& v) { return v.param("s"); }

std::string check_split(const Variant& v) {
  if (splits(v) < 2) return "SPLIT_K must be at least 2 (1 is the warptile family)";
  return check_tiles(v);
}

// The template's cluster is SPLIT_K blocks along grid.z; 8 is the portable cluster size limit.
std::string check_cluster_split(const Variant& v) {
  if (splits(v) > 8) return "CLUSTER_REDUCE needs 2 to 8 K slices: a cluster of more than 8 blocks is not portable";
  return check_split(v);
}

// Two stages of As[BK][BM + 4] and Bs[BK][BN], all dynamic shared memory.
std::size_t shared_bytes(const Variant& v) {
  const Tiles t(v);
  return 2 * static_cast<std::size_t>(t.bk) * static_cast<std::size_t>(t.bm + 4 + t.bn) *
         sizeof(float);
}

// The stages, or the BM x BN partial tile that the cluster's blocks read, which reuses them.
std::size_t cluster_shared_bytes(const Variant& v) {
  const Tiles t(v);
  return std::max(shared_bytes(v), static_cast<std::size_t>(t.bm) *
                                       static_cast<std::size_t>(t.bn) * sizeof(float));
}

LaunchGeometry geometry(const Variant& v, const Problem& p) {
  const Tiles t(v);
  LaunchGeometry g;
  g.grid_x64 = ceil_div(p.N, t.bn);
  g.grid_y64 = ceil_div(p.M, t.bm);
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[1] = static_cast<unsigned>(g.grid_y64);
  g.block[0] = static_cast<unsigned>(t.threads());
  g.dynamic_shared_bytes = shared_bytes(v);
  return g;
}

LaunchGeometry split_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = geometry(v, p);
  g.grid_z64 = static_cast<std::uint64_t>(splits(v));
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  return g;
}

// The partial tile may need more shared memory than the stages (cluster_shared_bytes).
LaunchGeometry cluster_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = split_geometry(v, p);
  g.dynamic_shared_bytes = cluster_shared_bytes(v);
  return g;
}

int alignment(const Variant& v) { return v.param("v"); }

}  // namespace

Family warptile_family() {
  // 8 (block, warp) tilings pass check(): 64x64 with 32x32 warps; 64x128, 128x64 and 128x128
  // with 4 warps; 128x128 with 64x32 or 32x64 warps, 256x64 and 256x128 with 8 warps. Times the
  // thread sub-tiles 4x4 and 8x4 (plus 4x8 for tall warps), two BK and two VEC: 76, less the 3
  // of 256x64 BK 8 VEC 4, whose B tile has fewer float4 than the block has threads: 73 variants
  // of MIN_BLOCKS 1, plus the 10 float4 128x128 ones of 256 threads with MIN_BLOCKS 2: 83.
  return {"warptile",
          "warptile.cu",
          {{"bm", "BM", {64, 128, 256}},
           {"bn", "BN", {64, 128}},
           {"bk", "BK", {8, 16}},
           {"wm", "WM", {32, 64}},
           {"wn", "WN", {32, 64}},
           {"tm", "TM", {4, 8}},
           {"tn", "TN", {4, 8}},
           {"v", "VEC", {1, 4}},
           {"mb", "MIN_BLOCKS", {1, 2}}},
          check_warptile,
          geometry,
          shared_bytes,
          alignment,
          no_k_split,
          false};
}

// The parameters of the split-K families: warptile's smaller block tiles (up to 128x128), BK 16
// (the better BK of every measured warptile winner), TN 4, times the given K slice counts.
std::vector<ParamSpec> split_params(std::vector<int> slices) {
  return {{"bm", "BM", {64, 128}}, {"bn", "BN", {64, 128}}, {"bk", "BK", {16}},
          {"wm", "WM", {32, 64}},  {"wn", "WN", {32, 64}},  {"tm", "TM", {4, 8}},
          {"tn", "TN", {4}},       {"v", "VEC", {1, 4}},    {"s", "SPLIT_K", std::move(slices)}};
}

Family splitk_family() {
  // For small M x N and large K, where even 64x64 tiles leave SMs idle (512^2 is 64 blocks for
  // 132 SMs): split_params() with 2 to 8 K slices. The tuner prunes it where the unsplit grid
  // already fills every SM (tuner.cpp), so it costs tuning time only on the shapes it serves.
  return {"splitk",
          "warptile.cu",
          split_params({2, 3, 4, 6, 8}),
          check_split,
          split_geometry,
          shared_bytes,
          alignment,
          splits,
          false};
}

Family padded_family() {
  // Odd leading dimensions (N = 4097, say) allow only the scalar warptile kernels. This family
  // runs the float4 kernel on copies of A and B whose rows are rounded up to 4 floats, made by the
  // module's own copy kernel (coalesced, one float per thread), and writes C in place with scalar
  // stores; the tuner prunes it on aligned problems and times it against the scalar kernels on
  // the others. At 4097 on the H200 it took 3.69 ms with cudaMemcpy2DAsync copies of A, B and C,
  // 3.66 ms with its own copies of A and B, against 3.45 ms for the best scalar kernel (the one
  // more row and column of tiles cost it a partial wave, as they do the scalar kernels): kept for
  // shapes where float4 matters more. Its tiles are those that win at N >= 2048 (BN 128).
  return {"padded",
          "warptile.cu",
          {{"bm", "BM", {64, 128, 256}},
           {"bn", "BN", {128}},
           {"bk", "BK", {16}},
           {"wm", "WM", {32, 64}},
           {"wn", "WN", {32, 64}},
           {"tm", "TM", {4, 8}},
           {"tn", "TN", {4}},
           {"v", "VEC", {4}}},
          check_tiles,
          geometry,
          shared_bytes,
          [](const Variant&) { return 1; },
          no_k_split,
          true};
}

Family clusterk_family() {
  // split-K without its second pass: on sm_90 the blocks of one C tile form a cluster and sum
  // their slices through each other's shared memory (warptile.cu, CLUSTER_REDUCE). That saves
  // the reduce kernel's launch, the workspace's allocation and the round trip of S partial
  // products through L2 (the reduce pass measured ~5 us of split-K's 65 us at 1000^3 on the
  // H200). The tiles of splitk; 2, 4 or 8 slices, clusters of up to 8 blocks being portable.
  Family f{"clusterk",
           "warptile.cu",
           split_params({2, 4, 8}),
           check_cluster_split,
           cluster_geometry,
           cluster_shared_bytes,
           alignment,
           splits,
           false};
  f.cluster_reduce = true;
  f.min_compute_capability = 90;
  return f;
}

}  // namespace tilemm::detail
