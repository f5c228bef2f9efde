// The one rule for when a family that splits K (splitk, clusterk, kslice) is not worth a budgeted
// search's time: where its unsplit grid already keeps every SM busy.
#pragma once

#include <cstdint>
#include <string>

namespace tilemm::detail {

// A split's blocks fill the waves again where the unsplit grid's last wave leaves SMs idle
// (136 tiles on 132 SMs: two waves, the second 3% full), so a split is pruned only where the
// unsplit grid fills at least this share of its waves' slots (wave_fill, family_registry.hpp).
inline constexpr double kUnsplitWaveFill = 0.85;

// Why `tiles` unsplit blocks on `sm_count` SMs leave a split of K nothing to gain; empty where a
// split may pay (fewer tiles than SMs, or a last wave that leaves too much idle) or where the
// SM count is unknown (0).
std::string unsplit_grid_fills_the_sms(std::uint64_t tiles, int sm_count);

}  // namespace tilemm::detail
