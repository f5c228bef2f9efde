// The padded family: the float4 warptile kernel (kernel_templates/warptile.cu, ALIGNED_COPIES)
// on copies of A and B whose rows start 128-byte aligned (aligned_copies.hpp), made by the module's own
// <name>_copy kernel, so that odd leading dimensions (N = 4097, say), which allow only the scalar
// warptile kernels, get float4 loads too; C is written in place with scalar stores. Its pruning
// hint keeps it out of aligned problems; on the others it is timed against the scalar kernels
// (docs/kernels.md). Its tiles are those with BN 128, which win at N >= 2048.
#include "aligned_copies.hpp"
#include "family_launch.hpp"
#include "family_registry.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

// The copies of A and B into the workspace, then the GEMM kernel on them, writing the caller's C.
void enqueue_on_aligned_copies(const LaunchRequest& r) {
  launch_gemm_kernel(r.kernels.gemm, warptile_geometry(r.variant, r.problem),
                     enqueue_aligned_copies(r), r.stream);
}

}  // namespace

Family padded_family() {
  Family f;
  f.name = "padded";
  f.template_file = "warptile.cu";
  f.params = {{"bm", "BM", {64, 128, 256}},
              {"bn", "BN", {128}},
              {"bk", "BK", {16}},
              {"wm", "WM", {32, 64}},
              {"wn", "WN", {32, 64}},
              {"tm", "TM", {4, 8}},
              {"tn", "TN", {4}},
              {"v", "VEC", {4}}};
  f.check_params = check_warptile_tiles;
  f.geometry = warptile_geometry;
  f.shared_bytes = warptile_shared_bytes;
  // The float4 loads read the aligned copies, and C is stored scalar: any alignment.
  run_on_aligned_copies(f);
  f.enqueue = enqueue_on_aligned_copies;
  return f;
}
TILEMM_FAMILY(padded_family, 500)

}  // namespace tilemm::detail
