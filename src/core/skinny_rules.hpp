// The rules that the families of kernel_templates/gemvn.cu and gemvm.cu share (the kernels'
// common part is kernel_templates/skinny.cuh): gemvn and gemvnring (families/gemvn.cpp), gemvm
// and gemvmring (families/gemvm.cpp). Both kernels run 256-thread
// blocks, sum K splits inside a thread block cluster (one kernel, no workspace, so the default
// enqueue launches them) and choose their load widths at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "family.hpp"

namespace tilemm::detail {

// Threads (8 warps) per block of both kernels (kThreads in skinny.cuh).
constexpr int kSkinnyThreads = 256;
constexpr int kSkinnyWarps = kSkinnyThreads / 32;

bool one_of(int value, std::initializer_list<int> allowed);

// The static_asserts the two shapes share, with the template's reasons. `per_lane` is ROWS
// (gemvn) or COLS (gemvm), `extent` MAX_N or MAX_M. `b_ring` (gemvmring's B_RING) lifts the wide
// shape's width of 4: with B out of the registers any width fits.
std::string check_split_and_width(const Variant& v, const char* per_lane_macro, int per_lane,
                                  const char* extent_macro, int extent, bool b_ring = false);

// The shapes a variant serving up to `most` rows (or columns) takes: not more, and not half or
// fewer, which the variant of half the size serves with half the arithmetic (a variant computes
// all `most` of them, the missing ones on copies of the last). So each M (or N) has one size of
// variant and the tuner times only its geometry and split choices.
std::string check_served_extent(std::int64_t extent, int most, const char* dimension,
                                const char* family);

// `blocks` blocks of kSkinnyThreads along x, the variant's K splits (`s`) along z.
LaunchGeometry skinny_geometry(std::uint64_t blocks, const Variant& v);

// The ring variants (gemvmring, gemvnring): cp.async needs sm_80; the split variants' clusters
// sm_90.
int ring_min_compute_capability(const Variant& v);

// A family of gemvn.cu or gemvm.cu (`template_file`) with the rules above: the split variants
// need compute capability 9.0 (thread block clusters), the unsplit ones run anywhere, and every
// alignment class runs every variant.
Family skinny_family(std::string name, std::string template_file, std::vector<ParamSpec> params,
                     std::string (*check_params)(const Variant&),
                     LaunchGeometry (*geometry)(const Variant&, const Problem&),
                     std::size_t (*shared_bytes)(const Variant&),
                     std::string (*check_problem)(const Variant&, const Problem&));

}  // namespace tilemm::detail
