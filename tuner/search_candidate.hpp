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
  // The budgeted search's look at a family nothing near has measured (its best-ranked candidate):
  // where it turns out the fastest so far, the family's other candidates are screened next.
  bool explores_family = false;
};

}  // namespace tilemm::tuner
