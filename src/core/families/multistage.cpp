// The multistage family (kernel_templates/multistage.cu): warptile's register-blocked SGEMM fed by
// cp.async through a ring of shared-memory stages, every warp a 64 x 64 tile of C. Its parameters
// are the block tile, BK, the stage count and the width of B's copies; the measurements behind
// them are in docs/kernels.md, and tests/test_multistage_family.cpp pins the space.
#include <cstdint>
#include <string>

#include "family_launch.hpp"
#include "family_registry.hpp"
#include "stream_k_split.hpp"
#include "tilemm/device.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

constexpr int kWarpTile = 64;  // the template's warp tile, 64 x 64 of C

struct MultistageTiles {
  int bm, bn, bk, stages, vec;
  explicit MultistageTiles(const Variant& v)
      : bm(v.param("bm")), bn(v.param("bn")), bk(v.param("bk")), stages(v.param("st")),
        vec(v.param("v")) {}
  int threads() const { return (bm / kWarpTile) * (bn / kWarpTile) * 32; }
};

// The template's static_asserts, one for one and with the same reasons.
std::string check_multistage(const Variant& v) {
  const MultistageTiles t(v);
  if (t.bm <= 0 || t.bn <= 0 || t.bm % kWarpTile != 0 || t.bn % kWarpTile != 0)
    return "BM and BN are multiples of the 64 x 64 warp tile";
  const int threads = t.threads();
  if (threads != 128 && threads != 256)
    return "BM * BN must be 2 or 4 warp tiles of 64 x 64: 128 or 256 threads per block";
  if (t.vec != 1 && t.vec != 4)
    return "VEC is 1 (4-byte copies of B, any alignment) or 4 (16-byte)";
  if (t.bk <= 0 || t.bk % 8 != 0)
    return "BK is a multiple of 8: A is copied in runs of 8 floats along K";
  if (t.stages < 2) return "at least 2 stages: one multiplied while the next is copied";
  if (t.bm % (threads / 8) != 0 || t.bm * t.bk % threads != 0)
    return "the A tile (BM x BK) must split evenly into runs of 8 floats among the threads";
  const int b_vecs_per_row = t.bn / t.vec;
  if (threads % b_vecs_per_row != 0 || t.bk % (threads / b_vecs_per_row) != 0)
    return "the B tile (BK x BN) must split into whole rows evenly among the threads";
  if (threads == 128 && t.bk == 16 && t.vec == 1)
    return "no BK 16 with 4-byte copies of B at 128 threads: ptxas spills their registers";
  return {};
}

// STAGES of As[BK][BM + 4] and Bs[BK][BN], all dynamic shared memory.
std::size_t multistage_shared_bytes(const Variant& v) {
  const MultistageTiles t(v);
  return static_cast<std::size_t>(t.stages) * static_cast<std::size_t>(t.bk) *
         static_cast<std::size_t>(t.bm + 4 + t.bn) * sizeof(float);
}

LaunchGeometry multistage_geometry(const Variant& v, const Problem& p) {
  const MultistageTiles t(v);
  LaunchGeometry g = grid_over_c(p.M, p.N, t.bm, t.bn, static_cast<unsigned>(t.threads()), 1);
  g.dynamic_shared_bytes = multistage_shared_bytes(v);
  return g;
}

// ---- streamk: the same kernels as persistent blocks, one per SM, the last waves cut in K ----

std::string check_streamk(const Variant& v) {
  if (std::string why = check_multistage(v); !why.empty()) return why;
  const MultistageTiles t(v);
  if (t.bk == 16 && t.vec == 1)
    return "no BK 16 with 4-byte copies of B with STREAM_K: ptxas spills their registers";
  if (t.threads() != 256)
    return "STREAM_K blocks are 256 threads, one per SM: all of them are resident at once";
  return {};
}

std::string streamk_problem(const Variant& v, const Problem& p) {
  const MultistageTiles t(v);
  return stream_k_tiles_fit(p, t.bm, t.bn);
}

std::size_t streamk_workspace(const Variant& v, const Problem& p, const DeviceInfo& device) {
  const MultistageTiles t(v);
  return stream_k_workspace_bytes(p, t.bm, t.bn, t.bk, device.sm_count);
}

// Where the split runs a block per tile and cuts none (stream_k::persistent_blocks), the kernel is
// multistage's own grid, which the tuner times already.
std::string streamk_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p) {
  const MultistageTiles t(v);
  const std::int64_t tiles = stream_k_tiles(p, t.bm, t.bn);
  if (device.sm_count > 0 && stream_k_blocks(p, t.bm, t.bn, t.bk, device.sm_count) == tiles)
    return "its " + std::to_string(tiles) + " tiles go one to a block, uncut, on the " +
           std::to_string(device.sm_count) + " SMs: multistage's own launch";
  return {};
}

std::uint64_t streamk_blocks(const Variant& v, const Problem& p, int sm_count) {
  const MultistageTiles t(v);
  return static_cast<std::uint64_t>(stream_k_blocks(p, t.bm, t.bn, t.bk, sm_count));
}

void enqueue_streamk(const LaunchRequest& r) {
  const MultistageTiles t(r.variant);
  LaunchGeometry g = multistage_geometry(r.variant, r.problem);
  stream_k::WorkSplit split = stream_k_split(r, t.bm, t.bn, t.bk, g);
  launch_gemm_kernel(r.kernels.gemm, g, r.args, r.stream, {&split});
}

}  // namespace

Family multistage_family() {
  Family f;
  f.name = "multistage";
  f.template_file = "multistage.cu";
  f.params = {{"bm", "BM", {128, 256}},
              {"bn", "BN", {128, 256}},
              {"bk", "BK", {8, 16}},
              {"st", "STAGES", {3, 4}},
              {"v", "VEC", {1, 4}}};
  f.check_params = check_multistage;
  f.min_compute_capability = 80;  // cp.async
  f.geometry = multistage_geometry;
  f.shared_bytes = multistage_shared_bytes;
  f.required_alignment = vec_alignment;
  return f;
}
TILEMM_FAMILY(multistage_family, 700)

Family streamk_family() {
  Family f = multistage_family();
  f.name = "streamk";
  // The tile and BK that won its probe at 3000-8192 (docs/kernels.md); 128 x 128 tiles are 128
  // threads, two blocks per SM, which the one-per-SM split does not fill.
  f.params = {{"bm", "BM", {128}},
              {"bn", "BN", {256}},
              {"bk", "BK", {8}},
              {"st", "STAGES", {3, 4}},
              {"v", "VEC", {1, 4}}};
  f.check_params = check_streamk;
  f.extra_definitions = {"-DSTREAM_K=1"};
  f.check_problem = streamk_problem;
  f.workspace_bytes = streamk_workspace;
  f.enqueue = enqueue_streamk;
  f.pruning_hint = streamk_pruning_hint;
  f.persistent_blocks = streamk_blocks;
  return f;
}
TILEMM_FAMILY(streamk_family, 800)

}  // namespace tilemm::detail
