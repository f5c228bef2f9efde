// When splitting K cannot pay, the one rule of every family whose "s" parameter splits K over
// blocks (splitk, clusterk, msclusterk).
#pragma once

#include <string>

#include "family.hpp"

namespace tilemm::detail {

// Why splitting K cannot pay for `problem` (empty when it might): the unsplit tiles (grid.x x
// grid.y of the family's own geometry) already give every SM a block, or a slice keeps too little
// of K to amortize its tile loads. Elsewhere the split variant is its unsplit twin plus the cost of
// summing the slices. The family's "s" parameter is its number of K slices.
std::string split_k_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p);

}  // namespace tilemm::detail
