// The skinny families (kernel_templates/skinny.cu): gemvn for N <= 16, gemvm for M <= 16, where
// every tiled family pads its tiles with rows or columns that do not exist. Each function below is
// one rule of a family (its parameters' validity, the shapes it serves, its launch geometry, its
// shared memory), set by name on the family's strategy object (family.hpp). K splits are summed
// inside a thread block cluster: one kernel, no workspace, so the default enqueue launches it; the
// split variants need compute capability 9.0, the unsplit ones run anywhere.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

// Threads (8 warps) per block of both kernels (kThreads in skinny.cu).
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

bool one_of(int value, std::initializer_list<int> allowed) {
  for (int a : allowed)
    if (a == value) return true;
  return false;
}

// The static_asserts the two shapes share, with the template's reasons. `per_lane` is ROWS
// (gemvn) or COLS (gemvm), `extent` MAX_N or MAX_M. `b_ring` (gemvmring's B_RING) lifts the wide
// shape's width of 4: with B out of the registers any width fits.
std::string check_split_and_width(const Variant& v, const char* per_lane_macro, int per_lane,
                                  const char* extent_macro, int extent, bool b_ring = false) {
  if (!one_of(v.param("s"), {1, 2, 4, 8}))
    return "SPLIT_K is 1, 2, 4 or 8 blocks of a cluster: more than 8 is not portable";
  if (!one_of(per_lane, {1, 2, 4}))
    return std::string(per_lane_macro) + " is 1, 2 or 4";
  if (extent >= 8) {
    if (per_lane != 4 && !b_ring)
      return std::string(per_lane_macro) + " is 4 where " + extent_macro +
             " >= 8 (the wide shape, which stages the small operand in shared memory)";
    return {};
  }
  if (per_lane != 1 && per_lane * extent > 4)
    return std::string(per_lane_macro) + " above 1 only where " + per_lane_macro + " x " +
           extent_macro + " <= 4: more accumulators do not fit the registers of 4 blocks per SM";
  return {};
}

// Thread block clusters (the split variants) need sm_90.
int skinny_min_compute_capability(const Variant& v) { return v.param("s") > 1 ? 90 : 0; }

// Every variant chooses its load widths at run time from the actual pointers and leading
// dimensions (skinny.cu), so every alignment class runs every variant.
int skinny_alignment(const Variant&) { return 1; }

// The shapes a variant serving up to `most` rows (or columns) takes: not more, and not half or
// fewer, which the variant of half the size serves with half the arithmetic (a variant computes
// all `most` of them, the missing ones on copies of the last). So each M (or N) has one size of
// variant and the tuner times only its geometry and split choices.
std::string check_served_extent(std::int64_t extent, int most, const char* dimension,
                                const char* family) {
  if (extent > most)
    return std::string(family) + " serves " + dimension + " <= " + std::to_string(most) +
           ", the problem has " + dimension + " = " + std::to_string(extent) +
           (most == 16 ? " (a tiled family serves it)" : "");
  if (most > 1 && extent <= most / 2)
    return std::string(family) + " with " + std::to_string(most) + " serves " + dimension +
           " in " + std::to_string(most / 2 + 1) + ".." + std::to_string(most) + ", the problem has " +
           dimension + " = " + std::to_string(extent) + " (the variant of " +
           std::to_string(most / 2) + " serves it with less arithmetic)";
  return {};
}

LaunchGeometry skinny_geometry(std::uint64_t blocks, const Variant& v) {
  LaunchGeometry g;
  g.grid_x64 = blocks;
  g.grid_z64 = static_cast<std::uint64_t>(v.param("s"));
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  g.block[0] = kThreads;
  return g;
}

// gemvn --------------------------------------------------------------------------------------
// The block's warps along K (kWarpsK in skinny.cu): fewer where B is wider, the rest along rows.
int gemvn_warps_along_k(const Variant& v) { return v.param("n") >= 8 ? 1 : kWarps / v.param("n"); }

// Rows of A per block: ROWS per warp, kWarps / kWarpsK warps (kRowsPerBlock in skinny.cu).
int gemvn_rows_per_block(const Variant& v) {
  return kWarps / gemvn_warps_along_k(v) * v.param("r");
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

// Outputs of a block: its rows times the n columns (kOutputs in skinny.cu).
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

// The ring: per warp A_RING slots of 4 rows x 32 k (kARingFloats in skinny.cu).
std::size_t gemvnring_ring_bytes(const Variant& v) {
  return static_cast<std::size_t>(kWarps) * static_cast<std::size_t>(v.param("d")) * 4 * 32 *
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

// gemvm --------------------------------------------------------------------------------------
// Columns of B per block: 32 lanes, COLS each (kColumns in skinny.cu).
int gemvm_columns_per_block(const Variant& v) { return 32 * v.param("c"); }

// gemvm's static_asserts; with `b_ring`, those of gemvmring's build of the same kernel.
std::string check_gemvm_shape(const Variant& v, bool b_ring) {
  if (!one_of(v.param("m"), {1, 2, 4, 8, 16})) return "MAX_M is 1, 2, 4, 8 or 16";
  return check_split_and_width(v, "COLS", v.param("c"), "MAX_M", v.param("m"), b_ring);
}

std::string check_gemvm_params(const Variant& v) { return check_gemvm_shape(v, false); }

std::string check_gemvm_problem(const Variant& v, const Problem& p) {
  return check_served_extent(p.M, v.param("m"), "M", "gemvm");
}

LaunchGeometry gemvm_geometry(const Variant& v, const Problem& p) {
  return skinny_geometry(ceil_div(p.N, gemvm_columns_per_block(v)), v);
}

// Static arrays: the warps' sums, a group of rows of C at a time (kWarps x rows x columns
// floats, at most 4096: kReduceRows in skinny.cu), and with a split the block's sums, which the
// cluster reads.
std::size_t gemvm_shared_bytes(const Variant& v) {
  const auto columns = static_cast<std::size_t>(gemvm_columns_per_block(v));
  const auto most_m = static_cast<std::size_t>(v.param("m"));
  const std::size_t per_row = kWarps * columns;
  std::size_t rows = 4096 / per_row;
  if (rows > most_m) rows = most_m;
  const std::size_t block_sums = v.param("s") > 1 ? most_m * columns : 0;
  // The stage of A: one float4 per thread in the wide shape (m >= 8, kStageK in skinny.cu),
  // one float4 in all in the others.
  const std::size_t stage = most_m >= 8 ? 4 * kThreads : 4;
  return (rows * per_row + block_sums + stage) * sizeof(float);
}

// gemvmring -----------------------------------------------------------------------------------
// The wide gemvm with B through a ring in shared memory (B_RING groups of rows in flight per
// warp): the ring's own static_assert, then gemvm's with the wide shape's width lifted.
std::string check_gemvmring_params(const Variant& v) {
  const int d = v.param("d");
  if (d < 2 || d > 8 || v.param("m") < 8)
    return "B_RING (groups of B in flight per warp) is 2 to 8, for the wide shape (MAX_M >= 8) only";
  return check_gemvm_shape(v, true);
}

// The ring: B_RING slots of kGroup (4) rows x kThreads x COLS floats (kRingFloats in skinny.cu).
std::size_t gemvmring_ring_bytes(const Variant& v) {
  return static_cast<std::size_t>(v.param("d")) * 4 * kThreads *
         static_cast<std::size_t>(v.param("c")) * sizeof(float);
}

// gemvm's arrays and the ring, all dynamic shared memory.
std::size_t gemvmring_shared_bytes(const Variant& v) {
  return gemvm_shared_bytes(v) + gemvmring_ring_bytes(v);
}

LaunchGeometry gemvmring_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = gemvm_geometry(v, p);
  g.dynamic_shared_bytes = gemvmring_shared_bytes(v);
  return g;
}

// cp.async needs sm_80; the split variants' clusters sm_90 (gemvmring and gemvnring).
int ring_min_compute_capability(const Variant& v) { return v.param("s") > 1 ? 90 : 80; }

// gemvnring's at three blocks per SM need sm_90: sm_80's ptxas spills n16_s1_d8 at the 80
// registers of three blocks (sm_90's does not).
int gemvnring_min_compute_capability(const Variant& v) {
  return v.param("mb") > 2 ? 90 : ring_min_compute_capability(v);
}

Family skinny_family(std::string name, std::vector<ParamSpec> params,
                     std::string (*check_params)(const Variant&),
                     LaunchGeometry (*geometry)(const Variant&, const Problem&),
                     std::size_t (*shared_bytes)(const Variant&),
                     std::string (*check_problem)(const Variant&, const Problem&)) {
  Family f;
  f.name = std::move(name);
  f.template_file = "skinny.cu";
  f.params = std::move(params);
  f.check_params = check_params;
  f.variant_min_compute_capability = skinny_min_compute_capability;
  f.check_problem = check_problem;
  f.geometry = geometry;
  f.shared_bytes = shared_bytes;
  f.required_alignment = skinny_alignment;
  return f;
}

}  // namespace

Family gemvn_family() {
  // Five sizes of N (each serves (n/2, n]), 1 to 4 rows of A per warp where the accumulators
  // allow, and K unsplit or over clusters of 2, 4 or 8 blocks for M too small to fill the SMs
  // (test_variant_names checks the count).
  return skinny_family(
      "gemvn",
      {{"n", "MAX_N", {1, 2, 4, 8, 16}}, {"r", "ROWS", {1, 2, 4}}, {"s", "SPLIT_K", {1, 2, 4, 8}}},
      check_gemvn_params, gemvn_geometry, gemvn_shared_bytes, check_gemvn_problem);
}
TILEMM_FAMILY(gemvn_family, 900)

Family gemvnring_family() {
  // gemvn's wide variants (N 5 to 16) whose A streams through shared memory, 4 or 8 steps of the
  // warp's rows ahead (deeper rings won nowhere: docs/kernels.md), where the registers hold
  // one: more bytes in flight per SM, and registers for two or three blocks per SM.
  Family f = skinny_family(
      "gemvnring",
      {{"n", "MAX_N", {8, 16}}, {"r", "ROWS", {4}}, {"s", "SPLIT_K", {1, 2, 4, 8}},
       {"d", "A_RING", {4, 8}}, {"mb", "MIN_BLOCKS", {2, 3}}},
      check_gemvnring_params, gemvnring_geometry, gemvnring_shared_bytes, check_gemvn_problem);
  f.variant_min_compute_capability = gemvnring_min_compute_capability;
  return f;
}
TILEMM_FAMILY(gemvnring_family, 1200)

Family gemvm_family() {
  // As gemvn, over M, with 32, 64 or 128 columns of B per block (1, 2 or 4 per lane) where the
  // accumulators allow. Splits matter more here: a few thousand columns are a few dozen to a
  // hundred blocks unsplit.
  return skinny_family(
      "gemvm",
      {{"m", "MAX_M", {1, 2, 4, 8, 16}}, {"c", "COLS", {1, 2, 4}}, {"s", "SPLIT_K", {1, 2, 4, 8}}},
      check_gemvm_params, gemvm_geometry, gemvm_shared_bytes, check_gemvm_problem);
}
TILEMM_FAMILY(gemvm_family, 1000)

Family gemvmring_family() {
  // gemvm's wide variants (M 5 to 16) whose B streams through shared memory, 4 groups of rows
  // ahead (deeper rings lost everywhere: docs/kernels.md): more bytes in flight per block
  // where few blocks must read all of B. Without registers to hold B, a lane may own 1 or 2
  // columns as well as 4, for 4 or 2 times the blocks where N is a few hundred.
  Family f = skinny_family(
      "gemvmring",
      {{"m", "MAX_M", {8, 16}}, {"c", "COLS", {1, 2, 4}}, {"s", "SPLIT_K", {1, 2, 4, 8}},
       {"d", "B_RING", {4}}},
      check_gemvmring_params, gemvmring_geometry, gemvmring_shared_bytes, check_gemvm_problem);
  f.variant_min_compute_capability = ring_min_compute_capability;
  return f;
}
TILEMM_FAMILY(gemvmring_family, 1100)

}  // namespace tilemm::detail
