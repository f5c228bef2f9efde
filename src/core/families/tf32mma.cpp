// The tf32mma family (kernel_templates/tf32mma.cu): TF32 tensor-core SGEMM for the precision
// modes high (SPLIT 3, 3xTF32) and medium (SPLIT 1), sm_80+. The space is a few block tiles of 4
// or 8 warps, two pipelines (BK 16 in 4 stages, BK 32 in 3: about the same bytes in flight), both
// splits (SPLIT 3 without the 64x64 warp tile) and both copy widths; tests/test_variant_names.cpp
// pins its size.
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

struct Tf32Tiles {
  int bm, bn, bk, wm, wn, stages, split, vec;
  explicit Tf32Tiles(const Variant& v)
      : bm(v.param("bm")),
        bn(v.param("bn")),
        bk(v.param("bk")),
        wm(v.param("wm")),
        wn(v.param("wn")),
        stages(v.param("st")),
        split(v.param("sp")),
        vec(v.param("v")) {}
  int threads() const { return (bm / wm) * (bn / wn) * 32; }
};

// The block and warp tiles the space holds: 8 warps of 64 x 32 (the balanced tile for large C),
// 8 warps of 64 x 64 (the most reuse per shared load, for the largest C), 4 warps for C that
// 128 x 128 tiles would leave SMs idle on. Every one meets the template's static_asserts with
// both pipelines and both copy widths.
bool listed_tile(const Tf32Tiles& t) {
  struct Tile {
    int bm, bn, wm, wn;
  };
  constexpr Tile kTiles[] = {{128, 128, 64, 32}, {128, 256, 64, 64}, {128, 64, 64, 32}, {64, 64, 32, 32}};
  for (const Tile& k : kTiles)
    if (k.bm == t.bm && k.bn == t.bn && k.wm == t.wm && k.wn == t.wn) return true;
  return false;
}

std::string check_tf32mma(const Variant& v) {
  const Tf32Tiles t(v);
  if (!listed_tile(t))
    return "block and warp tiles must be one of 128x128 (64x32 warps), 128x256 (64x64), 128x64 "
           "(64x32), 64x64 (32x32)";
  if (!((t.bk == 16 && t.stages == 4) || (t.bk == 32 && t.stages == 3)))
    return "the pipeline is BK 16 in 4 stages or BK 32 in 3";
  // 4-byte copies are four times the cp.async instructions: kept to the smaller K tile, and off
  // the 128x256 tile, for the unaligned problems they exist for.
  if (t.vec == 1 && (t.bk != 16 || t.bn == 256))
    return "VEC 1 only with BK 16 and tiles up to 128 wide";
  // SPLIT 3 holds big and small A fragments and, with PROMOTE (its default), a k8 step's partial
  // sums besides the accumulators: a 64x64 warp tile needs more than 255 registers and spills.
  if (t.split == 3 && t.wm * t.wn > 64 * 32) return "SPLIT 3 only with warp tiles up to 64x32";
  return {};
}

std::size_t tf32mma_shared_bytes(const Variant& v) {
  const Tf32Tiles t(v);
  // The template's padded rows: A [BM][BK + 4], B [BK][BN + 8], per stage.
  const auto floats = static_cast<std::size_t>(t.stages) *
                      (static_cast<std::size_t>(t.bm) * static_cast<std::size_t>(t.bk + 4) +
                       static_cast<std::size_t>(t.bk) * static_cast<std::size_t>(t.bn + 8));
  return floats * sizeof(float);
}

LaunchGeometry tf32mma_geometry(const Variant& v, const Problem& p) {
  const Tf32Tiles t(v);
  LaunchGeometry g = grid_over_c(p.M, p.N, t.bm, t.bn, static_cast<unsigned>(t.threads()), 1);
  g.dynamic_shared_bytes = tf32mma_shared_bytes(v);
  return g;
}

int tf32mma_alignment(const Variant& v) { return v.param("v"); }

}  // namespace

Family tf32mma_family() {
  Family f;
  f.name = "tf32mma";
  f.template_file = "tf32mma.cu";
  f.params = {{"bm", "BM", {64, 128}},      {"bn", "BN", {64, 128, 256}},
              {"bk", "BK", {16, 32}},       {"wm", "WM", {32, 64}},
              {"wn", "WN", {32, 64}},       {"st", "STAGES", {3, 4}},
              {"sp", "SPLIT", {1, 3}},      {"v", "VEC", {1, 4}}};
  f.check_params = check_tf32mma;
  // mma.sync with .tf32, cp.async and cvt.rna.tf32 need sm_80.
  f.min_compute_capability = 80;
  f.precision = computes_tf32_split;
  f.geometry = tf32mma_geometry;
  f.shared_bytes = tf32mma_shared_bytes;
  f.required_alignment = tf32mma_alignment;
  return f;
}
TILEMM_FAMILY(tf32mma_family, 1300)

}  // namespace tilemm::detail
