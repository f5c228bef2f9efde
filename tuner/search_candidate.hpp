// One candidate variant on its way through a search: its result so far and, once compiled, its
// binary. Shared by the exhaustive loop (tuner.cpp) and the budgeted search (budgeted_search.cpp).
#pragma once

#include <optional>

#include "nvrtc_compiler.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::tuner {

struct SearchCandidate {
  Variant variant;
  CandidateResult result;  // status ok while it is still in the running
  std::optional<detail::CompiledVariant> binary;
};

}  // namespace tilemm::tuner
