// What runs a shape that may not be tuned now (TunePolicy::off, and background's wait): the
// winner of the nearest tuned shape (log distance over M, N, K) of this device, class and
// precision that can run the problem, among the fresh cache entries and the preloaded ones that
// apply; else the precision's default variant, else the default variant, else naive.
#pragma once

#include "stored_results.hpp"
#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::dispatch {

Variant fallback_variant(StoredResults& results, const DeviceInfo& device, const Problem& problem);

}  // namespace tilemm::dispatch
