// The one provenance policy: which stored results may serve a call of this build on this device.
//
// Freshness is cache::is_stale (cache/tuning_store.hpp), one rule for every source: an entry of
// the SQLite cache (tuned here or imported) must match the running results hash of its problem
// (the kernels that could serve it and the timing method: results_hash), NVRTC and driver (a
// driver of 0 is unknown and not compared); a preloaded entry the results hash only, as a shipped
// result is a good guess, not a measurement here. The results hash is per problem: a family that
// cannot run a problem, added or changed, leaves that problem's entries fresh. Which device an
// entry serves: a cache entry its device model (the store is keyed by it); a preloaded entry its
// model, else any model of the same architecture (cache::preloaded_applies). Which candidate
// set's entries serve a caller: set_serves, asked in the order of sets_serving. And a fresh entry
// serves only if its winner is usable here (why_unusable). The dispatcher, the preloaded lookup,
// the fleet's store and tilemm-tune --list all ask these functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {

// The hash that results of `problem` on a device of `compute_capability` (major * 10 + minor) and
// `l2_bytes` of L2 are versioned by (a StoredEntry's versions.template_hash, 16 hex digits): one
// FNV-1a over the fingerprint of the families that can serve the problem
// (detail::kernels_fingerprint: which kernels a tuning of it timed, with their templates and the
// headers those include) and the version of the tuner's timing method for the input mode the
// problem is timed in there (tuner::timing_method_version(tuner::input_mode(problem, l2_bytes)):
// what a timing means). A result tuned when such a family was missing or different, or timed
// another way, carries another, and is stale; a change to one input mode's method stales only the
// results of problems timed in that mode. Reads the problem's M, N, K, alignment class and
// precision. Cost: a memoized fingerprint (the first call for a shape walks the families' spaces).
std::string results_hash(const Problem& problem, int compute_capability, std::uint64_t l2_bytes);

// The problem a stored entry was tuned for, as far as the results hash reads it: its shape, the
// alignment class of its problem class ("a4-dense": 4) and its precision.
Problem problem_of(const cache::StoredEntry& entry);

// The compute capability (major * 10 + minor) an architecture name ("sm_90") stands for, 0 when
// it names none.
int compute_capability_of(const std::string& arch);

// The versions this process runs under on `device` for results of `problem` (its results hash,
// above).
cache::BuildVersions running_versions(const DeviceInfo& device, const Problem& problem);

// The same for a stored entry's own problem (problem_of): what the fallback, the tuning history
// and listings compare each entry with.
cache::BuildVersions running_versions(const DeviceInfo& device, const cache::StoredEntry& entry);

// The same without a device (tilemm-tune --list on any machine): the compute capability is the
// entry's architecture's, the driver version the runtime's answer, 0 where there is no driver, so
// that it is not compared. The L2 is that of a GPU of the entry's model on this machine; where
// there is none, the L2 and so the input mode are unknown, and the results hash is the one of
// either mode's timing method that the entry carries (the rotated one where it carries neither).
cache::BuildVersions running_versions_here(const cache::StoredEntry& entry);

// Whether `entry` may serve this build: !cache::is_stale(entry, running).
bool is_fresh(const cache::StoredEntry& entry, const cache::BuildVersions& running);

// The candidates a tuning of `problem` chooses from in this process, so the set its result is
// stored under and the set its caller asks for: with vendor candidates where the problem allows
// them (Problem::vendor) and a vendor provider is available here
// (detail::vendor_candidates_available), else own kernels only. Cost: a walk over the few
// registered providers.
cache::CandidateSet candidate_set_of(const Problem& problem);

// Whether `entry` may serve a caller of `problem` by the candidates it was chosen from: a caller
// with vendor candidates only by a result chosen with them (one of own kernels only may have
// missed a faster vendor candidate); a caller of own kernels only by a result of own kernels
// only, or by one chosen with vendor candidates whose winner is an own kernel (that tuning timed
// every own candidate too). The one rule of candidate sets; the stores answer per set. Cost: a
// name split; candidate_set_of only where the answer depends on it (an own-only entry for a
// caller allowing vendor candidates, a vendor winner), so that a process served an own winner
// never loads the vendor's library for it.
bool set_serves(const cache::StoredEntry& entry, const Problem& problem);

// The sets whose entries may serve a caller of `problem`, in the order a lookup asks the stores
// for them: the set of Problem::vendor first, then the other; each answer is held to
// set_serves. Asks no provider.
std::vector<cache::CandidateSet> sets_serving(const Problem& problem);

// The one walk over the candidate sets of every lookup: asks `find(set)` for each set in the
// order of sets_serving, and returns the first entry that may serve a caller of `problem`
// (set_serves) and that `accept(entry)` takes; an entry it refuses (stale, unusable) lets the
// next set answer. `accept` may amend the entry it takes.
template <class Find, class Accept>
std::optional<cache::StoredEntry> first_serving_entry(const Problem& problem, Find&& find,
                                                      Accept&& accept) {
  for (const cache::CandidateSet set : sets_serving(problem)) {
    std::optional<cache::StoredEntry> entry = find(set);
    if (entry && set_serves(*entry, problem) && accept(*entry)) return entry;
  }
  return std::nullopt;
}

// Why a winner's name cannot serve `problem` on `device`, empty when it can: a row-split plan
// must split the rows in two, a provider's candidate (candidate_provider.hpp) must be allowed
// (a vendor one only where problem.vendor) and its provider's why_cannot_run must pass (cuBLASLt
// loaded, the version it was chosen with), a variant must be one this build knows and can_run()
// must pass.
std::string why_unusable(const std::string& winner, const DeviceInfo& device, const Problem& problem);

}  // namespace tilemm::dispatch
