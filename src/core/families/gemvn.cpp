// The gemvn families (kernel_templates/gemvn.cu): a matrix times a few vectors,
// N <= 16, where every tiled family pads its tiles with columns that do not exist; gemvnring is
// its wide shape with A through a ring in shared memory. Each function below is one rule of a
// family (its parameters' validity, the shapes it serves, its launch geometry, its shared
// memory), set by name on the family's strategy object (family.hpp); what it shares with gemvm
// is in skinny_rules.hpp.
#include <cstddef>
#include <string>

#include "family_registry.hpp"
#include "skinny_rules.hpp"

namespace tilemm::detail {
namespace {

// The block's warps along K (kWarpsK in gemvn.cu): fewer where B is wider, the rest along rows.
int gemvn_warps_along_k(const Variant& v) {
  return v.param("n") >= 8 ? 1 : kSkinnyWarps / v.param("n");
}

// Rows of A per block: ROWS per warp, kWarps / kWarpsK warps (kRowsPerBlock in gemvn.cu).
int gemvn_rows_per_block(const Variant& v) {
  return kSkinnyWarps / gemvn_warps_along_k(v) * v.param("r");
}

std::string check_gemvn_params(const Variant& v) {
  if (!one_of(v.param("n"), {1, 2, 4, 8, 16})) return "MAX_N is 1, 2, 4, 8 or 16";
  return check_split_and_width(v, "ROWS", v.param("r"), "MAX_N", v.param("n"));
}

std::string check_gemvn_problem(const Variant& v, const Problem& p) {
  return check_served_extent(p.N, v.param("n"), "N", "gemvn");
}

LaunchGeometry gemvn_geometry(const Variant& v, const Problem& p) {
  return skinny_geometry(ceil_div(p.M, gemvn_rows_per_block(v)), v);
}

// Outputs of a block: its rows times the n columns (kOutputs in gemvn.cu).
std::size_t gemvn_outputs(const Variant& v) {
  return static_cast<std::size_t>(gemvn_rows_per_block(v) * v.param("n"));
}

// The wide shape's (n >= 8) stage of B: 128 rows of n + n / 4 floats (kStageK, kStride); none
// in the others.
std::size_t gemvn_b_stage_floats(const Variant& v) {
  const int n = v.param("n");
  return n >= 8 ? static_cast<std::size_t>(128 * (n + n / 4)) : 0;
}

// Static arrays: the per-warp sums (kWarpsK x outputs) and, with warps along K, the block's;
// the stage of B.
std::size_t gemvn_shared_bytes(const Variant& v) {
  const std::size_t outputs = gemvn_outputs(v);
  const auto along_k = static_cast<std::size_t>(gemvn_warps_along_k(v));
  return (along_k * outputs + (along_k > 1 ? outputs : 1) + gemvn_b_stage_floats(v)) *
         sizeof(float);
}

// gemvnring ------------------------------------------------------------------------------------
// The wide gemvn with A through a ring in shared memory (A_RING steps of a warp's 4 rows x 32 k
// in flight): the ring's own static_assert, then gemvn's (the wide shape: r is 4).
std::string check_gemvnring_params(const Variant& v) {
  const int d = v.param("d");
  if (d < 2 || d > 16 || v.param("n") < 8)
    return "A_RING (steps of A in flight per warp) is 2 to 16, for the wide shape (MAX_N >= 8) only";
  if (v.param("mb") != 2 && v.param("mb") != 3)
    return "MIN_BLOCKS is 2, or 3 with A through the ring (A_RING)";
  return check_gemvn_params(v);
}

// The ring: per warp A_RING slots of 4 rows x 32 k (kARingFloats in gemvn.cu).
std::size_t gemvnring_ring_bytes(const Variant& v) {
  return static_cast<std::size_t>(kSkinnyWarps) * static_cast<std::size_t>(v.param("d")) * 4 * 32 *
         sizeof(float);
}

// All dynamic: the warps' sums (one per output: the wide shape has no warps along K), the stage
// of B (as gemvn's) and the rings.
std::size_t gemvnring_shared_bytes(const Variant& v) {
  return (gemvn_outputs(v) + gemvn_b_stage_floats(v)) * sizeof(float) + gemvnring_ring_bytes(v);
}

LaunchGeometry gemvnring_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = gemvn_geometry(v, p);
  g.dynamic_shared_bytes = gemvnring_shared_bytes(v);
  return g;
}

// gemvnring's at three blocks per SM need sm_90: sm_80's ptxas spills n16_s1_d8 at the 80
// registers of three blocks (sm_90's does not).
int gemvnring_min_compute_capability(const Variant& v) {
  return v.param("mb") > 2 ? 90 : ring_min_compute_capability(v);
}

}  // namespace

Family gemvn_family() {
  // Five sizes of N (each serves (n/2, n]), 1 to 4 rows of A per warp where the accumulators
  // allow, and K unsplit or over clusters of 2, 4 or 8 blocks for M too small to fill the SMs
  // (test_variant_names checks the count).
  return skinny_family(
      "gemvn", "gemvn.cu",
      {{"n", "MAX_N", {1, 2, 4, 8, 16}}, {"r", "ROWS", {1, 2, 4}}, {"s", "SPLIT_K", {1, 2, 4, 8}}},
      check_gemvn_params, gemvn_geometry, gemvn_shared_bytes, check_gemvn_problem);
}
TILEMM_FAMILY(gemvn_family, 900)

Family gemvnring_family() {
  // gemvn's wide variants (N 5 to 16) whose A streams through shared memory, 4 or 8 steps of the
  // warp's rows ahead (deeper rings won nowhere: docs/kernels.md), where the registers hold
  // one: more bytes in flight per SM, and registers for two or three blocks per SM.
  Family f = skinny_family(
      "gemvnring", "gemvn.cu",
      {{"n", "MAX_N", {8, 16}}, {"r", "ROWS", {4}}, {"s", "SPLIT_K", {1, 2, 4, 8}},
       {"d", "A_RING", {4, 8}}, {"mb", "MIN_BLOCKS", {2, 3}}},
      check_gemvnring_params, gemvnring_geometry, gemvnring_shared_bytes, check_gemvn_problem);
  f.variant_min_compute_capability = gemvnring_min_compute_capability;
  return f;
}
TILEMM_FAMILY(gemvnring_family, 1200)

}  // namespace tilemm::detail
