// The kernel families, in registry order: the order of family_names() and variant_space(). Each
// family is a strategy object (family.hpp) built in its own file, src/core/family_<name>.cpp;
// family_registry.cpp only lists them. Adding a family is one template, one family file and its
// test (docs/kernels.md, "Adding a family").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "family.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// Every family: the library's own, then those added by register_extra_family.
const std::vector<Family>& families();

// The library's families, one per file.
Family naive_family();     // src/core/family_naive.cpp
Family tiled_family();     // src/core/family_tiled.cpp
Family warptile_family();  // src/core/family_warptile.cpp
Family splitk_family();    // src/core/family_splitk.cpp
Family padded_family();    // src/core/family_padded.cpp
Family clusterk_family();  // src/core/family_clusterk.cpp
Family multistage_family();  // src/core/family_multistage.cpp: cp.async stages, 64 x 64 warp tiles
Family streamk_family();     // src/core/family_multistage.cpp: the same, persistent, last wave cut in K

Family gemvn_family();     // src/core/family_skinny.cpp: matrix times a few vectors, N <= 16
Family gemvm_family();     // src/core/family_skinny.cpp: a few row vectors times a matrix, M <= 16
Family gemvmring_family(); // src/core/family_skinny.cpp: gemvm's wide shape, B through a shared ring
Family gemvnring_family(); // src/core/family_skinny.cpp: gemvn's wide shape, A through a shared ring
Family tf32mma_family();   // src/core/family_tf32mma.cpp: TF32 tensor cores, precisions high, medium
Family tf32wgmma_family(); // src/core/family_tf32wgmma.cpp: Hopper's wgmma, high and medium, sm_90a
Family tf32wgmmapad_family();  // src/core/family_tf32wgmma.cpp: the same on aligned copies of A and B

// The lowest compute capability (major * 10 + minor) `v` of `family` compiles and runs on: the
// family's min_compute_capability, or its variant's where that is higher.
int min_compute_capability(const Family& family, const Variant& v);

// Whether `v` compiles for `arch` ("sm_90"): its min_compute_capability(), which an
// arch_specific family's must equal.
bool variant_builds_for(const Variant& v, const std::string& arch);

// The --gpu-architecture NVRTC compiles `v` for on a device of `arch` ("sm_90"): `arch`, or
// "sm_90a" for an arch_specific family's variant. No compile, no CUDA call.
std::string nvrtc_architecture(const Variant& v, const std::string& arch);

// Leading dimension of an aligned copy (or of a split-K slice) of rows of `n` floats: `n`
// rounded up to 4 floats, so that every row starts 16-byte aligned.
std::int64_t aligned_ld(std::int64_t n);

struct EmbeddedTemplate;

// Adds a family whose template is not embedded in the library: test-only kernels (the faulty
// family of tests/kernel_templates/). Call before any other use of tilemm, from one thread (it
// invalidates references to families()). Not part of templates_hash(), so cache keys of real
// families are unaffected. Throws tilemm::Error (internal) when a family of that name exists or
// `family` lacks a required field (name, template_file, geometry, shared_bytes, enqueue...).
void register_extra_family(const Family& family, const EmbeddedTemplate& source);

// The family called `name`; throws tilemm::InvalidArgument("family") when there is none.
const Family& find_family(const std::string& name);

// The embedded template `v` is compiled from (its family's); its sha256 is part of the key of the
// variant's stored CUBIN. Throws as find_family, and tilemm::Error when the file is not embedded.
const EmbeddedTemplate& template_of(const Variant& v);

// Blocks in the grid of `v` on `problem` (grid x * y * z before narrowing to CUDA's types), the
// tiles of a persistent kernel: what the tuner's ranking counts waves over the SMs with. Throws
// as find_family.
std::uint64_t grid_blocks(const Variant& v, const Problem& problem);

// Blocks that one call of `v` launches on `sm_count` SMs: the family's persistent blocks, or the
// grid's (grid_blocks). What the tuner asks how much of the machine a kernel fills, and how much
// its last wave leaves idle.
std::uint64_t launched_blocks(const Variant& v, const Problem& problem, int sm_count);

// The -D options that specialize the family's template into `v`: the kernel symbol, one per
// parameter, then the family's extra_definitions.
std::vector<std::string> compile_definitions(const Variant& v);

}  // namespace tilemm::detail
