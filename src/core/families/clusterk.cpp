// The clusterk family: split-K without its second pass. On sm_90 the SPLIT_K blocks of one C
// tile form a thread block cluster and sum their slices through each other's shared memory
// (kernel_templates/warptile.cu, CLUSTER_REDUCE): one kernel, no workspace, no reduce launch and
// no round trip of the partial products through L2 (docs/kernels.md).
#include <algorithm>
#include <string>

#include "family_registry.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

// The template's cluster is SPLIT_K blocks along grid.z; 8 is the portable cluster size limit.
std::string check_cluster_split(const Variant& v) {
  if (k_slices(v) > 8)
    return "CLUSTER_REDUCE needs 2 to 8 K slices: a cluster of more than 8 blocks is not portable";
  return check_split(v);
}

// The stages, or the BM x BN partial tile that the cluster's blocks read, which reuses them.
std::size_t cluster_shared_bytes(const Variant& v) {
  const WarptileTiles t(v);
  return std::max(warptile_shared_bytes(v), static_cast<std::size_t>(t.bm) *
                                                static_cast<std::size_t>(t.bn) * sizeof(float));
}

// The partial tile may need more shared memory than the stages.
LaunchGeometry cluster_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = split_geometry(v, p);
  g.dynamic_shared_bytes = cluster_shared_bytes(v);
  return g;
}

}  // namespace

Family clusterk_family() {
  Family f;
  f.name = "clusterk";
  f.template_file = "warptile.cu";
  f.params = split_params({2, 4, 8});
  f.check_params = check_cluster_split;
  f.min_compute_capability = 90;  // thread block clusters
  f.geometry = cluster_geometry;
  f.shared_bytes = cluster_shared_bytes;
  f.required_alignment = vec_alignment;
  f.extra_definitions = {"-DCLUSTER_REDUCE=1"};
  f.pruning_hint = split_k_pruning_hint;  // it splits K like splitk, and pays where splitk does
  return f;
}
TILEMM_FAMILY(clusterk_family, 600)

}  // namespace tilemm::detail
