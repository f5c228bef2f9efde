// The warptile family (kernel_templates/warptile.cu): block, warp and thread tiles, VEC-wide
// global accesses, and MIN_BLOCKS for __launch_bounds__. The size and make-up of its space are
// pinned by tests/test_variant_names.cpp; the measurements behind it are in docs/kernels.md.
#include <string>

#include "family_registry.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

// __launch_bounds__(256, 2): two blocks per SM need <= 128 registers per thread. The 256-thread
// tiles of 64 outputs per thread take more unbounded (docs/kernels.md), so one block runs per SM
// (8 warps) and each barrier idles the SM; bounded, they fit in 128 without spilling (the
// compile test checks).
std::string check_warptile(const Variant& v) {
  const int min_blocks = v.param("mb");
  if (min_blocks != 1 && min_blocks != 2) return "MIN_BLOCKS is 1 or 2";
  if (std::string why = check_warptile_tiles(v); !why.empty()) return why;
  const WarptileTiles t(v);
  if (min_blocks == 2 && (t.threads() != 256 || t.wm * t.wn / 32 > 64 || t.vec != 4 ||
                          t.bm != 128 || t.bn != 128))
    return "MIN_BLOCKS = 2 only for 128x128 tiles of 256 threads with float4 loads: more "
           "outputs, scalar staging or the 256-row A tile do not fit 128 registers unspilled, "
           "and 128-thread blocks fit twice unbounded";
  return {};
}

}  // namespace

Family warptile_family() {
  Family f;
  f.name = "warptile";
  f.template_file = "warptile.cu";
  f.params = {{"bm", "BM", {64, 128, 256}},
              {"bn", "BN", {64, 128}},
              {"bk", "BK", {8, 16}},
              {"wm", "WM", {32, 64}},
              {"wn", "WN", {32, 64}},
              {"tm", "TM", {4, 8}},
              {"tn", "TN", {4, 8}},
              {"v", "VEC", {1, 4}},
              {"mb", "MIN_BLOCKS", {1, 2}}};
  f.check_params = check_warptile;
  f.geometry = warptile_geometry;
  f.shared_bytes = warptile_shared_bytes;
  f.required_alignment = vec_alignment;
  return f;
}
TILEMM_FAMILY(warptile_family, 300)

}  // namespace tilemm::detail
