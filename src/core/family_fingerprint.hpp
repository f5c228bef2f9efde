// Which kernel families could serve a problem, and the fingerprint of their kernels that a stored
// result of that problem is versioned by (dispatch::results_hash). A tuning result can only have
// changed when a family that could have run its problem is new or was changed, so a family that
// cannot run a problem, added or changed, leaves that problem's stored results fresh.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "family.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// Whether some variant of `family`'s space passes the checks of can_run() that depend on the
// problem and the device's compute capability alone: the variant's compute capability against
// `compute_capability` (major * 10 + minor), its precision, the shapes it serves (check_problem)
// and the problem's alignment class. The device's resource limits (threads, shared memory, grid,
// workspace) are left out: they could only drop a family that some device cannot run, so leaving
// them out makes a result stale more often, never less. Reads problem.M, N, K, alignment and
// precision only. Cost: stops at the first variant that passes.
bool family_can_serve(const Family& family, const Problem& problem, int compute_capability);

// The families of families() that can serve `problem` (family_can_serve), in search order.
std::vector<const Family*> families_serving(const Problem& problem, int compute_capability);

// The fingerprint (16 hex digits, FNV-1a) over the name, template file and template SHA-256 (which
// covers the headers the template pulls in) of each family that can serve `problem`. Memoized per
// (M, N, K, alignment class, precision, compute capability, number of registered families), so a
// family registered later (register_extra_family) counts. Thread-safe. Cost: the first call of a
// process lists every family's space; the first call for a shape walks each family's space until
// a variant serves it; later ones are a map lookup under a mutex.
std::string kernels_fingerprint(const Problem& problem, int compute_capability);

// The same with each family's template digest given by `digest_of` instead of its embedded
// template's: what the fingerprint would be were a template changed. Not memoized.
std::string kernels_fingerprint(const Problem& problem, int compute_capability,
                                const std::function<std::string_view(const Family&)>& digest_of);

}  // namespace tilemm::detail
