// What gemm() runs for a shape, as the dispatcher remembers it: a loaded kernel or a row-split
// plan, and whether it is a fallback chosen without a tuning result.
#pragma once

#include <cstdint>

#include "candidate_provider.hpp"
#include "kernel_library.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::dispatch {

struct Decision {
  const detail::LoadedKernel* kernel = nullptr;  // null for a row-split plan
  bool fallback = false;  // chosen without a tuning result for this shape (policy off)
  // > 0: a row-split plan (row_split.hpp): rows [0, split_rows) and the rest are dispatched as
  // shapes of their own, each to its own winner.
  std::int64_t split_rows = 0;
  // A fallback whose background tuning was queued (TunePolicy::background): the worker replaces
  // this decision with the winner once it is stored.
  bool queued = false;
  // A provider's candidate (candidate_provider.hpp), prepared once: gemm() enqueues it instead of
  // a kernel (then `kernel` is null).
  const detail::PreparedCandidate* prepared = nullptr;
};

// Whether a remembered decision must be resolved again by a call under `policy`: a fallback,
// when the call may tune now (tune_on_miss) or queue a tuning not queued yet (background).
bool resolves_again(const Decision& decision, TunePolicy policy);

}  // namespace tilemm::dispatch
