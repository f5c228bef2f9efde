// The gemvm families (kernel_templates/gemvm.cu): a few row vectors times a matrix,
// M <= 16, where every tiled family pads its tiles with rows that do not exist; gemvmring is its
// wide shape with B through a ring in shared memory. Each function below is one rule of a family
// (its parameters' validity, the shapes it serves, its launch geometry, its shared memory), set
// by name on the family's strategy object (family.hpp); what it shares with gemvn is in
// skinny_rules.hpp.
#include <cstddef>
#include <string>

#include "family_registry.hpp"
#include "skinny_rules.hpp"

namespace tilemm::detail {
namespace {

// Columns of B per block: 32 lanes, COLS each (kColumns in gemvm.cu).
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

// Static arrays: the warps' sums, a group of rows of C at a time (kSkinnyWarps x rows x columns
// floats, at most 4096: kReduceRows in gemvm.cu), and with a split the block's sums, which the
// cluster reads.
std::size_t gemvm_shared_bytes(const Variant& v) {
  const auto columns = static_cast<std::size_t>(gemvm_columns_per_block(v));
  const auto most_m = static_cast<std::size_t>(v.param("m"));
  const std::size_t per_row = kSkinnyWarps * columns;
  std::size_t rows = 4096 / per_row;
  if (rows > most_m) rows = most_m;
  const std::size_t block_sums = v.param("s") > 1 ? most_m * columns : 0;
  // The stage of A: one float4 per thread in the wide shape (m >= 8, kStageK in gemvm.cu),
  // one float4 in all in the others.
  const std::size_t stage = most_m >= 8 ? 4 * kSkinnyThreads : 4;
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

// The ring: B_RING slots of kGroup (4) rows x kSkinnyThreads x COLS floats (kRingFloats in gemvm.cu).
std::size_t gemvmring_ring_bytes(const Variant& v) {
  return static_cast<std::size_t>(v.param("d")) * 4 * kSkinnyThreads *
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

}  // namespace

Family gemvm_family() {
  // As gemvn, over M, with 32, 64 or 128 columns of B per block (1, 2 or 4 per lane) where the
  // accumulators allow. Splits matter more here: a few thousand columns are a few dozen to a
  // hundred blocks unsplit.
  return skinny_family(
      "gemvm", "gemvm.cu",
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
      "gemvmring", "gemvm.cu",
      {{"m", "MAX_M", {8, 16}}, {"c", "COLS", {1, 2, 4}}, {"s", "SPLIT_K", {1, 2, 4, 8}},
       {"d", "B_RING", {4}}},
      check_gemvmring_params, gemvmring_geometry, gemvmring_shared_bytes, check_gemvm_problem);
  f.variant_min_compute_capability = ring_min_compute_capability;
  return f;
}
TILEMM_FAMILY(gemvmring_family, 1100)

}  // namespace tilemm::detail
