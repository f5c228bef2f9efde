// One entry per kernel family: where its template is, which parameters it has and which values
// they take, which combinations are valid, and how a variant is launched. Everything else
// (names, the space, can_run, compile options, launch) is derived from this table, so adding a
// family is one template file plus one entry in family_registry.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tilemm/variant.hpp"

namespace tilemm::detail {

struct ParamSpec {
  std::string key;          // in the name: "t" in "tiled_t32"
  std::string macro;        // -D macro of the template: "TILE"
  std::vector<int> values;  // the space
};

struct LaunchGeometry {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::size_t dynamic_shared_bytes = 0;
  std::uint64_t grid_x64 = 1, grid_y64 = 1, grid_z64 = 1;  // before narrowing, for can_run
};

// Tiles of `tile` (> 0) that cover `extent` (>= 0): a grid dimension before narrowing.
inline std::uint64_t ceil_div(std::int64_t extent, std::int64_t tile) {
  return static_cast<std::uint64_t>((extent + tile - 1) / tile);
}

struct Family {
  std::string name;
  std::string template_file;
  std::vector<ParamSpec> params;
  // Why this combination of values is not a valid kernel; empty when it is. Mirrors the
  // static_asserts of the template, so invalid combinations are never compiled.
  std::string (*check_params)(const Variant&);
  LaunchGeometry (*geometry)(const Variant&, const Problem&);
  // Static plus dynamic shared memory per block, bytes.
  std::size_t (*shared_bytes)(const Variant&);
  // Alignment class (1, 2 or 4 floats) a problem needs for this variant.
  int (*required_alignment)(const Variant&);
  // How many slices K is split into (grid.z). Above 1, unless cluster_reduce, the module also
  // holds <name>_reduce, and a launch needs a workspace of that many M x N partial products (see
  // launch.cpp).
  int (*k_splits)(const Variant&);
  // Runs on copies of A and B whose rows start 16-byte aligned (leading dimensions rounded up to
  // 4 floats), made by <name>_copy of its module, so that its float4 kernel serves problems of
  // any alignment; C is written in place. Compiled with -DALIGNED_COPIES=1 (see launch.cpp).
  bool aligned_copies;
  // The k_splits() blocks of a C tile form a thread block cluster and sum their partials in
  // distributed shared memory: one kernel, no workspace. Compiled with -DCLUSTER_REDUCE=1.
  bool cluster_reduce = false;
  // Lowest compute capability (major * 10 + minor) the template compiles and runs on; 0: any.
  // can_run() refuses older devices, and the space compiled for an older architecture skips it.
  int min_compute_capability = 0;
  // Where one variant needs more than the family's minimum (the skinny families' cluster
  // variants need 9.0, their unsplit ones run anywhere): that variant's; nullptr: the family's.
  int (*variant_min_compute_capability)(const Variant&) = nullptr;
  // Why `problem` lies outside the shapes this family serves (gemvm only M <= 16, say); empty
  // when inside. nullptr: every shape. can_run() asks it, so the tuner never times such a pair.
  std::string (*check_problem)(const Variant&, const Problem&) = nullptr;
};

// k_splits of the families that do not split K.
int no_k_split(const Variant&);

const std::vector<Family>& families();

// The register-blocked warp-tiled family (core/family_warptile.cpp), an entry of families().
Family warptile_family();
// The same kernel with K split over grid.z and a reduction (core/family_warptile.cpp).
Family splitk_family();
// The float4 warptile kernel on aligned copies of the operands (core/family_warptile.cpp).
Family padded_family();
// Split-K whose slices are summed inside a thread block cluster (sm_90, core/family_warptile.cpp).
Family clusterk_family();

// Matrix times a few vectors, N <= 16 (src/family_skinny.cpp), an entry of families().
Family gemvn_family();
// A few row vectors times a matrix, M <= 16 (src/family_skinny.cpp).
Family gemvm_family();

// The lowest compute capability (major * 10 + minor) `v` of `family` compiles and runs on: the
// family's min_compute_capability, or its variant's where that is higher.
int min_compute_capability(const Family& family, const Variant& v);

// Whether `v` compiles for `arch` ("sm_90"): its min_compute_capability().
bool variant_builds_for(const Variant& v, const std::string& arch);

// Leading dimension of an aligned copy (or of a split-K slice) of rows of `n` floats.
std::int64_t aligned_ld(std::int64_t n);

// Bytes of workspace one launch of `v` on `problem` needs: the split-K slices or the aligned
// copies of A and B; 0 for the families that need none.
std::size_t workspace_bytes(const Family& family, const Variant& v, const Problem& problem);

struct EmbeddedTemplate;

// Adds a family whose template is not embedded in the library: test-only kernels (the faulty
// family of tests/kernel_templates/). Call before any other use of tilemm, from one thread. Not
// part of templates_hash(), so cache keys of real families are unaffected.
void register_extra_family(const Family& family, const EmbeddedTemplate& source);

// The family called `name`; throws tilemm::InvalidArgument("family") when there is none.
const Family& find_family(const std::string& name);

// The -D options that specialize the family's template into `v`, including the kernel symbol.
std::vector<std::string> compile_definitions(const Variant& v);

}  // namespace tilemm::detail
