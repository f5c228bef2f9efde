// The msclusterk family: multistage's kernel with K split over the blocks of a thread block
// cluster (kernel_templates/multistage.cu, SPLIT_K), for shapes whose large tiles are too few to
// fill the SMs: a narrow M or N (128-256) with the others in the thousands, or a square near 1000.
// The SPLIT_K blocks of one C tile sum their partial tiles through distributed shared memory, as
// clusterk does for warptile's kernel: one kernel, no workspace, the same bits on every run.
#include <algorithm>
#include <string>

#include "family_registry.hpp"
#include "multistage_tiles.hpp"
#include "split_k_rule.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

std::string check_msclusterk(const Variant& v) {
  const int slices = v.param("s");
  if (slices < 1 || slices > 8)
    return "SPLIT_K is 1 (no split) to 8 blocks of a cluster: more than 8 is not portable";
  return check_multistage_tiles(v);
}

// The stages, or the BM x BN partial tile that the cluster's blocks read, which reuses them.
std::size_t msclusterk_shared_bytes(const Variant& v) {
  const MultistageTiles t(v);
  return std::max(multistage_stage_bytes(v), static_cast<std::size_t>(t.bm) *
                                                 static_cast<std::size_t>(t.bn) * sizeof(float));
}

// grid.z is the cluster: the K slices of one C tile.
LaunchGeometry msclusterk_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = multistage_grid(v, p, msclusterk_shared_bytes(v));
  g.grid_z64 = static_cast<std::uint64_t>(v.param("s"));
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  return g;
}

}  // namespace

Family msclusterk_family() {
  Family f;
  f.name = "msclusterk";
  f.template_file = "multistage.cu";
  // float4 copies of B only: the shapes it serves are aligned in practice, and the unaligned ones
  // have clusterk's scalar variants.
  f.params = {{"bm", "BM", {128, 256}}, {"bn", "BN", {128, 256}}, {"bk", "BK", {8, 16}},
              {"st", "STAGES", {3, 4}},  {"v", "VEC", {4}},        {"s", "SPLIT_K", {2, 4, 8}}};
  f.check_params = check_msclusterk;
  f.min_compute_capability = 90;  // thread block clusters
  f.geometry = msclusterk_geometry;
  f.shared_bytes = msclusterk_shared_bytes;
  f.required_alignment = vec_alignment;
  f.pruning_hint = split_k_pruning_hint;
  return f;
}

}  // namespace tilemm::detail
