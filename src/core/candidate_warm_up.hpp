// A provider's candidate run once before a caller runs it: a vendor library's first launch loads
// its kernels (tens of milliseconds), which a TunePolicy::background caller must not wait for
// (no_wait.hpp). The dispatcher's worker calls this when it makes a stored winner ready.
#pragma once

#include "candidate_provider.hpp"
#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// Runs `candidate` once on `problem`'s shape and leading dimensions, with zeroed buffers of its
// own on a stream of its own, on `device` (the current device), and waits for it; frees what it
// made. Throws tilemm::Error naming the failed call.
void warm_up_candidate(const DeviceInfo& device, const Problem& problem,
                       const PreparedCandidate& candidate);

}  // namespace tilemm::detail
