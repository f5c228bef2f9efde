#include "provenance.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <map>

#include "candidate_provider.hpp"
#include "kernel_sources.hpp"
#include "row_split.hpp"
#include "tilemm/error.hpp"
#include "timing_method.hpp"

namespace tilemm::dispatch {

const std::string& results_hash(Precision precision) {
  static const auto& hashes = *new std::map<Precision, std::string>([] {
    std::map<Precision, std::string> out;
    for (const Precision p : {Precision::highest, Precision::high, Precision::medium}) {
      const std::string text =
          detail::templates_hash(p) + ";timing method " + std::to_string(tuner::kTimingMethodVersion);
      std::uint64_t h = 1469598103934665603ull;  // FNV-1a
      for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
      out[p] = hex;
    }
    return out;
  }());
  return hashes.at(precision);
}

cache::BuildVersions running_versions(const DeviceInfo& device, Precision precision) {
  return {results_hash(precision), device.nvrtc_version, device.driver_version};
}

cache::BuildVersions running_versions_here(Precision precision) {
  cache::BuildVersions v;
  v.template_hash = results_hash(precision);
  v.nvrtc_version = nvrtc_version();
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  v.driver_version = driver;  // 0 where there is no driver: cache::is_stale then ignores it
  return v;
}

bool is_fresh(const cache::StoredEntry& entry, const cache::BuildVersions& running) {
  return !cache::is_stale(entry, running);
}

std::string why_unusable(const std::string& winner, const DeviceInfo& device, const Problem& problem) {
  if (const auto rows = detail::parse_row_split(winner))
    return detail::row_split_fits(*rows, problem) ? "" : "it does not split the rows in two";
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
