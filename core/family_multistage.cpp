// The multistage family (kernel_templates/multistage.cu): warptile's register-blocked SGEMM fed by
// cp.async through a ring of shared-memory stages, every warp a 64 x 64 tile of C. Its parameters
// are the block tile, BK, the stage count and the width of B's copies; the measurements behind
// them are in docs/kernels.md, and tests/test_multistage_family.cpp pins the space.
#include "family_registry.hpp"
#include "multistage_tiles.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

LaunchGeometry multistage_geometry(const Variant& v, const Problem& p) {
  return multistage_grid(v, p, multistage_stage_bytes(v));
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
  f.check_params = check_multistage_tiles;
  f.min_compute_capability = 80;  // cp.async
  f.geometry = multistage_geometry;
  f.shared_bytes = multistage_stage_bytes;
  f.required_alignment = vec_alignment;
  return f;
}

}  // namespace tilemm::detail
