// The skinny families (kernel_templates/skinny.cu): gemvn for N <= 16, gemvm for M <= 16, where
// every tiled family pads its tiles with rows or columns that do not exist. Each function below is
// one rule of a family (its parameters' validity, the shapes it serves, its launch geometry, its
// shared memory), written as a plain function so that it can move onto another family interface
// as it is. Splits use the splitk family's launch sequence (launch.cpp: the kernel into slices of
// a workspace, then <name>_reduce with 256 threads over VEC columns each), which the template's
// reduce kernel matches.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

// Threads per block of the template's two kernels (NTHREADS in skinny.cu).
constexpr int kGemvNThreads = 128;
constexpr int kGemvMThreads = 256;

bool one_of(int value, std::initializer_list<int> allowed) {
  for (int a : allowed)
    if (a == value) return true;
  return false;
}

// The static_asserts the two shapes share, with the template's reasons.
std::string check_vec_and_split(const Variant& v) {
  if (!one_of(v.param("v"), {1, 2, 4})) return "VEC is 1, 2 or 4 floats per load";
  if (const int s = v.param("s"); s < 1 || s > 32)
    return "SPLIT_K is the number of K slices, 1 to 32";
  return {};
}

int skinny_alignment(const Variant& v) { return v.param("v"); }
int skinny_k_splits(const Variant& v) { return v.param("s"); }

// The shapes a variant serving up to `most` rows (or columns) takes: not more, and not half or
// fewer, which the variant of half the size serves with half the arithmetic (a variant computes
// all `most` of them, the missing ones on zeros). So each M (or N) has one size of variant and
// the tuner times only its VEC and split choices.
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

// gemvn --------------------------------------------------------------------------------------
// Rows of A per block: 4 warps, each 4 rows (2 where MAX_N < 4) (kRowsPerBlock in skinny.cu).
int gemvn_rows_per_block(const Variant& v) {
  const int rows_per_warp = v.param("n") >= 4 ? 4 : 2;
  return kGemvNThreads / 32 * rows_per_warp;
}

std::string check_gemvn_params(const Variant& v) {
  if (!one_of(v.param("n"), {1, 2, 4, 8, 16})) return "MAX_N is 1, 2, 4, 8 or 16";
  return check_vec_and_split(v);
}

std::string check_gemvn_problem(const Variant& v, const Problem& p) {
  return check_served_extent(p.N, v.param("n"), "N", "gemvn");
}

LaunchGeometry gemvn_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g;
  g.grid_x64 = ceil_div(p.M, gemvn_rows_per_block(v));
  g.grid_z64 = static_cast<std::uint64_t>(v.param("s"));
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  g.block[0] = kGemvNThreads;
  return g;
}

// No shared memory: the warps are independent and reduce with shuffles.
std::size_t gemvn_shared_bytes(const Variant&) { return 0; }

// gemvm --------------------------------------------------------------------------------------
// Columns of B per block: one warp-wide run, VEC floats per lane (kColumns in skinny.cu).
int gemvm_columns_per_block(const Variant& v) { return 32 * v.param("v"); }

std::string check_gemvm_params(const Variant& v) {
  if (!one_of(v.param("m"), {1, 2, 4, 8, 16})) return "MAX_M is 1, 2, 4, 8 or 16";
  return check_vec_and_split(v);
}

std::string check_gemvm_problem(const Variant& v, const Problem& p) {
  return check_served_extent(p.M, v.param("m"), "M", "gemvm");
}

LaunchGeometry gemvm_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g;
  g.grid_x64 = ceil_div(p.N, gemvm_columns_per_block(v));
  g.grid_z64 = static_cast<std::uint64_t>(v.param("s"));
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  g.block[0] = kGemvMThreads;
  return g;
}

// The static array through which the warps' partial sums meet: a group of rows of C at a time,
// kWarps x rows x columns floats, at most 4096 (kReduceRows in skinny.cu).
std::size_t gemvm_shared_bytes(const Variant& v) {
  const std::size_t per_row = static_cast<std::size_t>(kGemvMThreads / 32) *
                              static_cast<std::size_t>(gemvm_columns_per_block(v));
  std::size_t rows = 4096 / per_row;
  if (rows > static_cast<std::size_t>(v.param("m"))) rows = static_cast<std::size_t>(v.param("m"));
  return rows * per_row * sizeof(float);
}

}  // namespace

Family gemvn_family() {
  // Five sizes of N (each serves (n/2, n]), three load widths (one per alignment class), and K
  // unsplit or in 4 or 16 slices for M too small to fill the SMs: 45 variants.
  Family f{"gemvn",
           "skinny.cu",
           {{"n", "MAX_N", {1, 2, 4, 8, 16}}, {"v", "VEC", {1, 2, 4}}, {"s", "SPLIT_K", {1, 4, 16}}},
           check_gemvn_params,
           gemvn_geometry,
           gemvn_shared_bytes,
           skinny_alignment,
           skinny_k_splits,
           false};
  f.check_problem = check_gemvn_problem;
  return f;
}

Family gemvm_family() {
  // As gemvn, over M: 45 variants. Splits matter more here: a block spans only 32 * VEC columns
  // of B, so N in the low thousands is 8 to 128 blocks unsplit.
  Family f{"gemvm",
           "skinny.cu",
           {{"m", "MAX_M", {1, 2, 4, 8, 16}}, {"v", "VEC", {1, 2, 4}}, {"s", "SPLIT_K", {1, 4, 16}}},
           check_gemvm_params,
           gemvm_geometry,
           gemvm_shared_bytes,
           skinny_alignment,
           skinny_k_splits,
           false};
  f.check_problem = check_gemvm_problem;
  return f;
}

}  // namespace tilemm::detail
