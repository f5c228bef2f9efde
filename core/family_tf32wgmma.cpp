// The tf32wgmma family (kernel_templates/tf32wgmma.cu): TF32 SGEMM on Hopper's wgmma for the
// precision modes high (SPLIT 3, 3xTF32) and medium (SPLIT 1), compute capability 9.0 exactly
// (wgmma is an sm_90a feature: the family is arch_specific). The space is four block tiles of one
// or two warpgroups, two pipelines (BK 16 in 4 raw stages, BK 32 in 2: about the same bytes in
// flight, within 227 KiB of shared memory with the two plane buffers) and both splits, high
// without the 256-wide tile; tests/test_variant_names.cpp pins its size.
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

struct WgmmaTiles {
  int bm, bn, bk, stages, split;
  explicit WgmmaTiles(const Variant& v)
      : bm(v.param("bm")), bn(v.param("bn")), bk(v.param("bk")), stages(v.param("st")),
        split(v.param("sp")) {}
  int threads() const { return bm / 64 * 128; }
};

// The block tiles the space holds: 128x128 and 128x256 (two warpgroups) for large C, 128x64 and
// 64x128 for C that larger tiles would leave SMs idle on.
bool listed_tile(const WgmmaTiles& t) {
  struct Tile {
    int bm, bn;
  };
  constexpr Tile kTiles[] = {{128, 128}, {128, 256}, {128, 64}, {64, 128}};
  for (const Tile& k : kTiles)
    if (k.bm == t.bm && k.bn == t.bn) return true;
  return false;
}

std::size_t tf32wgmma_shared_bytes(const Variant& v) {
  const WgmmaTiles t(v);
  const auto bm = static_cast<std::size_t>(t.bm), bn = static_cast<std::size_t>(t.bn),
             bk = static_cast<std::size_t>(t.bk);
  // The template's raw stages, A [BM][BK + 4] and B [BK][BN], then two buffers of planes, BM x BK
  // and BN x BK each, one per split part.
  const std::size_t raw = static_cast<std::size_t>(t.stages) * (bm * (bk + 4) + bk * bn);
  const std::size_t planes = 2 * (t.split == 3 ? 2u : 1u) * (bm + bn) * bk;
  return (raw + planes) * sizeof(float);
}

// The most dynamic shared memory a block may opt in to on every compute capability 9.0 device.
constexpr std::size_t kSm90SharedOptIn = 227 * 1024;

std::string check_tf32wgmma(const Variant& v) {
  const WgmmaTiles t(v);
  if (!listed_tile(t)) return "the block tile must be one of 128x128, 128x256, 128x64, 64x128";
  if (!((t.bk == 16 && t.stages == 4) || (t.bk == 32 && t.stages == 2)))
    return "the pipeline is BK 16 in 4 stages or BK 32 in 2";
  // SPLIT 3's promotion keeps a partial sum beside the accumulators: BN floats per thread.
  if (t.split == 3 && t.bn > 128) return "SPLIT 3 only with tiles up to 128 wide";
  if (tf32wgmma_shared_bytes(v) > kSm90SharedOptIn)
    return "the stages and planes exceed the 227 KiB of shared memory of compute capability 9.0";
  return {};
}

LaunchGeometry tf32wgmma_geometry(const Variant& v, const Problem& p) {
  const WgmmaTiles t(v);
  LaunchGeometry g = grid_over_c(p.M, p.N, t.bm, t.bn, static_cast<unsigned>(t.threads()), 1);
  g.dynamic_shared_bytes = tf32wgmma_shared_bytes(v);
  return g;
}

// 16-byte cp.async only: the unaligned problems are tf32mma's v1 variants'.
int tf32wgmma_alignment(const Variant&) { return 4; }

}  // namespace

Family tf32wgmma_family() {
  Family f;
  f.name = "tf32wgmma";
  f.template_file = "tf32wgmma.cu";
  f.params = {{"bm", "BM", {64, 128}},  {"bn", "BN", {64, 128, 256}}, {"bk", "BK", {16, 32}},
              {"st", "STAGES", {2, 4}}, {"sp", "SPLIT", {1, 3}}};
  f.check_params = check_tf32wgmma;
  // wgmma.mma_async exists only in sm_90a: compiled for it, run on 9.0 alone.
  f.min_compute_capability = 90;
  f.arch_specific = true;
  f.precision = computes_tf32_split;
  f.geometry = tf32wgmma_geometry;
  f.shared_bytes = tf32wgmma_shared_bytes;
  f.required_alignment = tf32wgmma_alignment;
  return f;
}

}  // namespace tilemm::detail
