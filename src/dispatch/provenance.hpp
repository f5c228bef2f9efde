// The one provenance policy: which stored results may serve a call of this build on this device.
//
// Freshness is cache::is_stale (cache/tuning_store.hpp), one rule for every source: an entry of
// the SQLite cache (tuned here or imported) must match the running results hash (templates and
// timing method: results_hash), NVRTC and driver (a driver of 0 is unknown and not compared); a
// preloaded entry the results hash only,
// as a shipped result is a good guess, not a measurement here. Which device an entry serves:
// a cache entry its device model (the store is keyed by it); a preloaded entry its model, else
// any model of the same architecture (cache::preloaded_applies). And a fresh entry serves only
// if its winner is usable here (why_unusable). The dispatcher, the preloaded lookup and
// tilemm-tune --list all ask these functions.
#pragma once

#include <string>

#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

// The hash that results of `precision` are versioned by (a StoredEntry's versions.template_hash,
// 16 hex digits): one FNV-1a over the templates hash of the precision
// (detail::templates_hash(precision): which kernels were timed) and the tuner's timing method
// (tuner::kTimingMethodVersion: what a timing means). A result tuned under other templates or
// timed another way carries another, and is stale. Cost: reads a kept hash.
const std::string& results_hash(Precision precision);

// The versions this process runs under on `device` for results of `precision` (its results hash,
// above). Cost: reads the kept hash.
cache::BuildVersions running_versions(const DeviceInfo& device, Precision precision = Precision::highest);

// The same without a device (tilemm-tune --list on any machine): the driver version is the
// runtime's answer, 0 where there is no driver, so that it is not compared.
cache::BuildVersions running_versions_here(Precision precision = Precision::highest);

// Whether `entry` may serve this build: !cache::is_stale(entry, running).
bool is_fresh(const cache::StoredEntry& entry, const cache::BuildVersions& running);

// Why a winner's name cannot serve `problem` on `device`, empty when it can: a row-split plan
// must split the rows in two, a provider's candidate (candidate_provider.hpp) must be allowed
// (a vendor one only where problem.vendor) and its provider's why_cannot_run must pass (cuBLASLt
// loaded, the version it was chosen with), a variant must be one this build knows and can_run()
// must pass.
std::string why_unusable(const std::string& winner, const DeviceInfo& device, const Problem& problem);

}  // namespace tilemm::dispatch
