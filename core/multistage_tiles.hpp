// The rules of kernel_templates/multistage.cu that its two families share (multistage, and
// msclusterk, its K split over a thread block cluster): the tiles, their validity, the stages'
// shared memory and the launch geometry of the unsplit kernel.
#pragma once

#include <cstddef>
#include <string>

#include "family.hpp"

namespace tilemm::detail {

struct MultistageTiles {
  int bm, bn, bk, stages, vec;
  explicit MultistageTiles(const Variant& v);
  // The template's warps: one per 64 x 64 tile of C. Meaningful once the check has passed.
  int threads() const;
};

// The template's static_asserts on the tiles, stages and copy width, one for one and with the
// same reasons; empty when they are valid.
std::string check_multistage_tiles(const Variant& v);

// STAGES of As[BK][BM + 4] and Bs[BK][BN], all dynamic shared memory.
std::size_t multistage_stage_bytes(const Variant& v);

// One block of threads() per BM x BN tile of C, with `shared_bytes` of dynamic shared memory;
// grid.z is 1.
LaunchGeometry multistage_grid(const Variant& v, const Problem& p, std::size_t shared_bytes);

}  // namespace tilemm::detail
