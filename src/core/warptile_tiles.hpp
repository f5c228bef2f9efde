// The rules of kernel_templates/warptile.cu that its four families share (warptile, splitk,
// clusterk, padded): the tile parameters, their validity, the launch geometry and the shared
// memory of the GEMM kernel, and split-K's parameters and pruning.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "family.hpp"

namespace tilemm::detail {

struct WarptileTiles {
  int bm, bn, bk, wm, wn, tm, tn, vec;
  explicit WarptileTiles(const Variant& v);
  // Only meaningful once check_warptile_tiles has passed.
  int threads() const { return (bm / wm) * (bn / wn) * 32; }
};

// The template's static_asserts on the tiles, one for one and with the same reasons; empty when
// the tiles are valid.
std::string check_warptile_tiles(const Variant& v);

// Two stages of As[BK][BM + 4] and Bs[BK][BN], all dynamic shared memory.
std::size_t warptile_shared_bytes(const Variant& v);

// One block of threads() per BM x BN tile of C, with warptile_shared_bytes; grid.z is 1.
LaunchGeometry warptile_geometry(const Variant& v, const Problem& p);

// Alignment class of the global accesses: VEC floats.
int vec_alignment(const Variant& v);

// The K slices of a split-K variant: its "s" parameter (SPLIT_K), also its grid.z.
int k_slices(const Variant& v);

// warptile_geometry with grid.z = k_slices.
LaunchGeometry split_geometry(const Variant& v, const Problem& p);

// The parameters of the split-K families: warptile's smaller block tiles (up to 128x128), BK 16
// (the better BK of every measured warptile winner), TN 4, times the given K slice counts as "s"
// (SPLIT_K).
std::vector<ParamSpec> split_params(std::vector<int> slices);

// check_warptile_tiles plus at least 2 slices.
std::string check_split(const Variant& v);

// Why splitting K cannot pay for `problem` (empty when it might): the unsplit tiles already give
// every SM a block, or a slice keeps too little of K to amortize its tile loads. Elsewhere the
// split variant is its warptile twin plus the cost of summing the slices.
std::string split_k_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p);

}  // namespace tilemm::detail
