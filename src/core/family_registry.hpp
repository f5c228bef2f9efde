// The kernel families, in search order: the order of family_names() and variant_space(). Each
// family is a strategy object (family.hpp) built in its own file under src/core/families/, which
// registers it with TILEMM_FAMILY below; the build lists those registrations
// (cmake/family_list.cmake), so no list of families is written by hand. Adding a family is one
// template and one family file (docs/kernels.md, "Adding a family").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "family.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// Every family: the library's own in search order, then those added by register_extra_family in
// the order they were added.
const std::vector<Family>& families();

// A family file's registration of one family: the function that makes it and the key that places
// it in the search order (ascending; each key used once). The function's name says which file it
// came from when two keys clash.
struct FamilyRegistration {
  int search_order;
  const char* factory;
  Family (*make)();
};

// Registers the family that `factory` makes: `Family factory()`, defined above this line, at the
// start of a line, in namespace tilemm::detail, of a file of src/core/families/ (or of another
// folder given to the build's tilemm_kernel_families). It defines factory##_registration(), which
// the generated list of the folder calls. That list, not a static initializer, is what registers
// the family: a registrar object that nothing references is dropped when the library is linked
// statically (libtilemm.a), while the list's call keeps the family file's object in every link.
#define TILEMM_FAMILY(factory, search_order)                                     \
  FamilyRegistration factory##_registration() {                                  \
    return FamilyRegistration{search_order, #factory, factory};                  \
  }

// The registrations of src/core/families/, in file order: generated at build time by
// cmake/family_list.cmake from their TILEMM_FAMILY lines.
std::vector<FamilyRegistration> library_family_registrations();

// The families `registrations` make, in search order. Throws tilemm::Error (internal) when two
// share a key.
std::vector<Family> in_search_order(std::vector<FamilyRegistration> registrations);

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
// invalidates references to families()). Not part of templates_hash(), so the CUBIN keys of real
// families are unaffected; like any new family it changes the results hash of the problems it can
// serve (family_fingerprint.hpp), whose stored results it makes stale. Throws tilemm::Error
// (internal) when a family of that name exists or `family` lacks a required field (name,
// template_file, geometry, shared_bytes, enqueue...).
void register_extra_family(const Family& family, const EmbeddedTemplate& source);

// register_extra_family for each family of `registrations` (a folder's generated list, see
// TILEMM_FAMILY), in their search order, each with its template_file from `templates`. Throws as
// register_extra_family, and tilemm::Error (internal) when a template is not among `templates`.
void register_extra_families(const std::vector<FamilyRegistration>& registrations,
                             const std::vector<EmbeddedTemplate>& templates);

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

// The share of the SMs' block slots that `blocks` blocks fill over the waves they take on
// `sm_count` SMs, one block per SM a wave: 1 where the last wave is full; 0 for no blocks or an
// unknown SM count (0).
double wave_fill(std::uint64_t blocks, int sm_count);

// The -D options that specialize the family's template into `v`: the kernel symbol, one per
// parameter, then the family's extra_definitions.
std::vector<std::string> compile_definitions(const Variant& v);

}  // namespace tilemm::detail
