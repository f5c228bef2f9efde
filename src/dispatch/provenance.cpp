#include "provenance.hpp"

#include <cuda_runtime_api.h>

#include <cctype>
#include <map>
#include <mutex>

#include "candidate_provider.hpp"
#include "family_fingerprint.hpp"
#include "fnv1a.hpp"
#include "row_split.hpp"
#include "tilemm/error.hpp"
#include "timing_method.hpp"

namespace tilemm::dispatch {

namespace {

std::string results_hash_of(const Problem& problem, int compute_capability, tuner::InputMode mode) {
  return detail::fnv1a_hex(detail::kernels_fingerprint(problem, compute_capability) +
                           ";timing method " +
                           std::to_string(tuner::timing_method_version(mode)));
}

// The L2 of a GPU of model `device_key` on this machine, 0 where there is none. Asked once per
// model: a listing asks for every entry.
std::uint64_t local_l2_bytes(const std::string& device_key) {
  static std::mutex mutex;
  static std::map<std::string, std::uint64_t> known;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(device_key); it != known.end()) return it->second;
  std::uint64_t l2 = 0;
  for (int i = 0; i < device_count() && l2 == 0; ++i) {
    try {
      const DeviceInfo& d = device_info(i);
      if (d.model_key() == device_key) l2 = d.l2_bytes;
    } catch (const Error&) {  // a device that cannot be queried is not this model's
    }
  }
  return known[device_key] = l2;
}

}  // namespace

std::string results_hash(const Problem& problem, int compute_capability, std::uint64_t l2_bytes) {
  return results_hash_of(problem, compute_capability, tuner::input_mode(problem, l2_bytes));
}

Problem problem_of(const cache::StoredEntry& entry) {
  Problem p = Problem::dense(entry.M, entry.N, entry.K);
  // The class is "a<alignment>-dense" or "a<alignment>-strided" (class_of); the JSON reader and
  // the store accept no other.
  const std::string& c = entry.problem_class;
  p.alignment = c.size() > 1 && c[0] == 'a' && c[1] >= '1' && c[1] <= '9' ? c[1] - '0' : 1;
  p.precision = entry.precision;
  return p;
}

int compute_capability_of(const std::string& arch) {
  if (arch.rfind("sm_", 0) != 0 || arch.size() < 5) return 0;
  int cc = 0;
  for (std::size_t i = 3; i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])); ++i)
    cc = cc * 10 + (arch[i] - '0');
  return cc;
}

cache::BuildVersions running_versions(const DeviceInfo& device, const Problem& problem) {
  return {results_hash(problem, device.cc_major * 10 + device.cc_minor, device.l2_bytes),
          device.nvrtc_version,
          device.driver_version};
}

cache::BuildVersions running_versions(const DeviceInfo& device, const cache::StoredEntry& entry) {
  return running_versions(device, problem_of(entry));
}

cache::BuildVersions running_versions_here(const cache::StoredEntry& entry) {
  // Asked once: a listing asks for every entry.
  static const int driver = [] {
    int version = 0;
    return cudaDriverGetVersion(&version) == cudaSuccess ? version : 0;
  }();
  cache::BuildVersions v;
  const Problem problem = problem_of(entry);
  const int cc = compute_capability_of(entry.arch);
  if (const std::uint64_t l2 = local_l2_bytes(entry.device_key); l2 > 0) {
    v.template_hash = results_hash(problem, cc, l2);
  } else {
    v.template_hash = results_hash_of(problem, cc, tuner::InputMode::same_buffers);
    if (v.template_hash != entry.versions.template_hash)
      v.template_hash = results_hash_of(problem, cc, tuner::InputMode::rotated);
  }
  v.nvrtc_version = nvrtc_version();
  v.driver_version = driver;  // 0 where there is no driver: cache::is_stale then ignores it
  return v;
}

bool is_fresh(const cache::StoredEntry& entry, const cache::BuildVersions& running) {
  return !cache::is_stale(entry, running);
}

cache::CandidateSet candidate_set_of(const Problem& problem) {
  return problem.vendor && detail::vendor_candidates_available() ? cache::CandidateSet::with_vendor
                                                                 : cache::CandidateSet::own_only;
}

// Whether a vendor provider is available is asked last: it may load the vendor's library, which
// a process served an own winner from its cache must not wait for.
bool set_serves(const cache::StoredEntry& entry, const Problem& problem) {
  if (entry.candidate_set == cache::CandidateSet::with_vendor)
    return !detail::is_vendor_candidate(entry.winner) ||
           candidate_set_of(problem) == cache::CandidateSet::with_vendor;
  return candidate_set_of(problem) == cache::CandidateSet::own_only;
}

std::vector<cache::CandidateSet> sets_serving(const Problem& problem) {
  if (problem.vendor) return {cache::CandidateSet::with_vendor, cache::CandidateSet::own_only};
  return {cache::CandidateSet::own_only, cache::CandidateSet::with_vendor};
}

std::string why_unusable(const std::string& winner, const DeviceInfo& device, const Problem& problem) {
  if (const auto rows = detail::parse_row_split(winner))
    return detail::is_tuned_row_split(*rows, problem) ? "" : "it is not a split of the rows that tuning makes";
  if (detail::CandidateProvider* provider = detail::provider_of(winner)) {
    if (provider->vendor() && !problem.vendor)
      return "it is a vendor candidate, and vendor candidates are off (Options::vendor)";
    if (std::string why = provider->why_cannot_run(winner, device, problem); !why.empty())
      return "it cannot run here: " + why;
    return "";
  }
  try {
    if (const Verdict verdict = can_run(parse_variant(winner), device, problem); !verdict)
      return "it cannot run here: " + verdict.reason;
  } catch (const InvalidArgument& e) {
    return std::string("it is unknown to this build: ") + e.what();
  }
  return "";
}

}  // namespace tilemm::dispatch
