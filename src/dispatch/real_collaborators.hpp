// The dispatcher's collaborators in a real process: the SQLite cache (opened on first use, never
// fatal), the fleet's Redis store of a call's Options::remote_cache, this process's kernel
// library and NVRTC, and the tuner on the GPU.
#pragma once

#include <functional>
#include <string>

#include "dispatcher.hpp"
#include "candidate_bench.hpp"

namespace tilemm::dispatch {

// `cache_path` is asked when the store is first used (the first miss or autotune()), so that
// TILEMM_CACHE set before then counts. Cost: nothing until then. Tunings time their candidates
// by `plan` (a context's effort).
Collaborators real_collaborators(std::function<std::string()> cache_path,
                                 const tuner::TimingPlan& plan);

}  // namespace tilemm::dispatch
