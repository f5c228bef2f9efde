// The tf32wgmma family (kernel_templates/tf32wgmma.cu): TF32 SGEMM on Hopper's wgmma for the
// precision modes high (SPLIT 3, 3xTF32) and medium (SPLIT 1), compute capability 9.0 exactly
// (wgmma is an sm_90a feature: the family is arch_specific). The kernel computes C^T = B^T A^T:
// BM (wgmma's N: 64, 128, 256) rows of C per block, BN / 64 consumer warpgroups of 64 columns
// each and a producer warpgroup, BK 32 (one 128-byte swizzle row), a ring of 3 or 4 stages (A and
// B by TMA, through tensor maps this file's enqueue encodes per call). The space:
// two-warpgroup tiles (BN 128) with 3 or 4 stages, one-warpgroup tiles (BN 64) for C that large
// tiles would leave SMs idle on, both splits, high without BM 256 (its partial sums beside the
// accumulators would not fit in registers), so that every high variant has a medium twin;
// tests/test_variant_names.cpp pins its size.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "aligned_copies.hpp"
#include "family_launch.hpp"
#include "family_registry.hpp"
#include "stream_k_split.hpp"
#include "tensor_map.hpp"

// The template's index maps, which host code may read.
#define TILEMM_TF32WGMMA_INDEX_MAPS_ONLY
#include "../kernel_templates/tf32wgmma.cu"

namespace tilemm::detail {
namespace {

struct WgmmaTiles {
  int bm, bn, bk, stages, split, stream_k;
  explicit WgmmaTiles(const Variant& v)
      : bm(v.param("bm")), bn(v.param("bn")), bk(v.param("bk")), stages(v.param("st")),
        split(v.param("sp")), stream_k(v.param("sk")) {}
  int threads() const { return (bn / 64 + 1) * 128; }  // consumers and the producer
};

std::size_t tf32wgmma_shared_bytes(const Variant& v) {
  const WgmmaTiles t(v);
  const auto bm = static_cast<std::size_t>(t.bm), bk = static_cast<std::size_t>(t.bk),
             stages = static_cast<std::size_t>(t.stages);
  // The template's stages, each an A tile of BM rows x BK floats, with SPLIT 3 a plane of A's
  // small parts as large, and a B tile of BK padded rows; two 8-byte barriers per stage (landed,
  // which is full, and empty), with SPLIT 3 three (landed, full, empty); and 1 KiB to align the
  // tiles to the 1024 bytes the 128-byte swizzle needs.
  const std::size_t a_planes = t.split == 3 ? 2 : 1;
  const auto b_row = static_cast<std::size_t>(tf32wgmma_maps::b_row_floats(t.bn));
  const std::size_t stage_floats = a_planes * bm * bk + bk * b_row;
  const std::size_t barriers = t.split == 3 ? 3 : 2;
  return stages * (stage_floats * sizeof(float) + barriers * 8) + 1024;
}

// The most dynamic shared memory a block may opt in to on every compute capability 9.0 device.
constexpr std::size_t kSm90SharedOptIn = 227 * 1024;

std::string check_tf32wgmma(const Variant& v) {
  const WgmmaTiles t(v);
  if (t.bk != 32) return "BK is 32: one 128-byte swizzle row of K";

  if (v.param("gm") != 1 && t.stream_k != 1) return "a grouped tile order only with sk 1";
  if (t.bm == 256 && t.split == 3)
    return "SPLIT 3 only up to BM 128: its partial sums double the BM / 2 accumulators";
  // Two warpgroups for BM 256: one alone would hold 128 accumulators and wait on one stream of
  // loads.
  if (t.bm == 256 && t.bn != 128) return "BM 256 only with BN 128";
  // Three stages for the two-warpgroup tiles, where a block fills an SM; the others keep 4.
  if (t.stages == 3 && t.bn != 128) return "3 stages only with BN 128";
  if (tf32wgmma_shared_bytes(v) > kSm90SharedOptIn)
    return "the stages exceed the 227 KiB of shared memory of compute capability 9.0";
  return {};
}

LaunchGeometry tf32wgmma_geometry(const Variant& v, const Problem& p) {
  const WgmmaTiles t(v);
  LaunchGeometry g = grid_over_c(p.M, p.N, t.bm, t.bn, static_cast<unsigned>(t.threads()), 1);
  g.dynamic_shared_bytes = tf32wgmma_shared_bytes(v);
  return g;
}

// TMA (16-byte aligned A and B, leading dimensions of multiples of 16 bytes) and 8-byte accesses
// to C only: the unaligned problems are tf32wgmmapad's and tf32mma's v1 variants'.
int tf32wgmma_alignment(const Variant&) { return 4; }

std::string tf32wgmma_problem(const Variant& v, const Problem& p) {
  const WgmmaTiles t(v);
  return t.stream_k == 1 ? stream_k_tiles_fit(p, t.bm, t.bn) : std::string();
}

// With sk 1 the blocks are persistent and their partial tiles and flags are the workspace
// (src/core/stream_k_split.hpp).
std::size_t tf32wgmma_workspace(const Variant& v, const Problem& p, const DeviceInfo& device) {
  const WgmmaTiles t(v);
  if (t.stream_k == 0) return 0;
  return stream_k_workspace_bytes(p, t.bm, t.bn, t.bk, device.sm_count);
}

std::uint64_t tf32wgmma_blocks(const Variant& v, const Problem& p, int sm_count) {
  const WgmmaTiles t(v);
  if (t.stream_k == 0) return grid_blocks(v, p);
  return static_cast<std::uint64_t>(stream_k_blocks(p, t.bm, t.bn, t.bk, sm_count));
}

// The GEMM signature every template shares, then the tensor maps of A (BM rows x 32 floats of K
// per box, the A tile in the swizzled layout the wgmma descriptor reads) and B (32 rows of K x a
// padded row per box: the B tile, padding included) and the work split.
void enqueue_tf32wgmma(const LaunchRequest& r) {
  const WgmmaTiles t(r.variant);
  // K == 0 loads no tile (and A and B may be null): the kernel never reads the maps.
  const bool loads = r.args.K > 0;
  CUtensorMap a_map = loads ? row_major_map(r.args.A, r.args.M, r.args.K, r.args.lda, t.bm, t.bk,
                                            BoxLayout::swizzled_128b)
                            : CUtensorMap{};
  CUtensorMap b_map = loads ? row_major_map(r.args.B, r.args.K, r.args.N, r.args.ldb, t.bk,
                                            tf32wgmma_maps::b_row_floats(t.bn), BoxLayout::dense)
                            : CUtensorMap{};
  LaunchGeometry g = tf32wgmma_geometry(r.variant, r.problem);
  stream_k::WorkSplit split{};
  if (t.stream_k == 1) {
    split = stream_k_split(r, t.bm, t.bn, t.bk, g);
  }
  launch_gemm_kernel(r.kernels.gemm, g, r.args, r.stream, {&a_map, &b_map, &split});
}

// tf32wgmmapad: the copies of A and B first in the workspace, then tf32wgmma's own (sk 1).
std::size_t tf32wgmmapad_workspace(const Variant& v, const Problem& p, const DeviceInfo& device) {
  return aligned_copies_bytes(p) + tf32wgmma_workspace(v, p, device);
}

// The copies of A and B (their rows 128-byte aligned), then the kernel on them, writing the
// caller's C (the template's ALIGNED_COPIES: any alignment). The copies are never empty (copy_ld
// is at least 32), so there is always a workspace, and what follows them stays 128-byte aligned.
void enqueue_tf32wgmmapad(const LaunchRequest& r) {
  const GemmArgs on_copies = enqueue_aligned_copies(r);
  const Problem problem = on_copies.problem();
  float* const rest = r.workspace + aligned_copies_bytes(r.problem) / sizeof(float);
  enqueue_tf32wgmma(LaunchRequest{r.family, r.variant, r.kernels, on_copies, problem, r.device,
                                  rest, r.stream});
}

}  // namespace

Family tf32wgmma_family() {
  Family f;
  f.name = "tf32wgmma";
  f.template_file = "tf32wgmma.cu";
  f.params = {{"bm", "BM", {64, 128, 256}}, {"bn", "BN", {64, 128}}, {"bk", "BK", {32}},
              {"st", "STAGES", {3, 4}},       {"sp", "SPLIT", {1, 3}},
              {"sk", "STREAM_K", {0, 1}},     {"gm", "GROUP_ROWS", {1, 4, 8}}};
  f.check_params = check_tf32wgmma;
  // wgmma.mma_async exists only in sm_90a: compiled for it, run on 9.0 alone.
  f.min_compute_capability = 90;
  f.arch_specific = true;
  f.precision = computes_tf32_split;
  f.geometry = tf32wgmma_geometry;
  f.shared_bytes = tf32wgmma_shared_bytes;
  f.required_alignment = tf32wgmma_alignment;
  f.enqueue = enqueue_tf32wgmma;
  f.workspace_bytes = tf32wgmma_workspace;
  f.check_problem = tf32wgmma_problem;
  f.persistent_blocks = tf32wgmma_blocks;
  return f;
}
TILEMM_FAMILY(tf32wgmma_family, 1400)

// The same kernels on aligned copies of A and B, for the problems whose alignment tf32wgmma
// cannot run (odd leading dimensions: 4097 x 4097, say), where the tensor-core alternative
// would be tf32mma's scalar-load variants. The copies cost a pass over A and B; the space keeps
// the tiles that win on large problems, which are where the copies pay.
Family tf32wgmmapad_family() {
  Family f = tf32wgmma_family();
  f.name = "tf32wgmmapad";
  f.params = {{"bm", "BM", {128, 256}}, {"bn", "BN", {128}}, {"bk", "BK", {32}},
              {"st", "STAGES", {4}},    {"sp", "SPLIT", {1, 3}},
              {"sk", "STREAM_K", {0, 1}}, {"gm", "GROUP_ROWS", {1, 4, 8}}};
  run_on_aligned_copies(f);
  f.workspace_bytes = tf32wgmmapad_workspace;  // the copies, then tf32wgmma's own
  f.enqueue = enqueue_tf32wgmmapad;
  return f;
}
TILEMM_FAMILY(tf32wgmmapad_family, 1500)

}  // namespace tilemm::detail
