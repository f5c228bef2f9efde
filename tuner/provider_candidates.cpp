#include "provider_candidates.hpp"

#include <exception>
#include <string>

#include "candidate_provider.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::tuner {

CheckResult CandidateBench::verify_prepared(const std::string& name, const Launcher&) {
  return {CandidateStatus::launch_error, "this bench does not run provider candidates (" + name + ")"};
}

TimingResult CandidateBench::time_prepared(const std::string& name, const Launcher&, double) {
  throw Error(ErrorKind::internal, "tilemm: this bench does not run provider candidates (" + name + ")");
}

void measure_provider_candidates(const DeviceInfo& device, const Problem& problem,
                                 CandidateBench& bench, const TuneSettings& settings,
                                 double& best_ms, std::vector<CandidateResult>& out) {
  if (!bench.runs_prepared()) return;
  const auto providers =
      settings.providers ? *settings.providers : detail::candidate_providers(problem);
  for (detail::CandidateProvider* provider : providers) {
    if (provider->vendor() && !problem.vendor) continue;
    std::vector<std::string> names;
    try {
      names = provider->candidates(device, problem);
    } catch (const std::exception& e) {
      detail::log(detail::LogLevel::info,
                  "the " + provider->prefix() + " provider lists no candidates: " + e.what());
      continue;
    }
    for (const std::string& name : names) {
      CandidateResult r;
      r.variant = name;
      if (record_skip(r, settings)) {
        out.push_back(std::move(r));
        continue;
      }
      if (std::string why = provider->why_cannot_run(name, device, problem); !why.empty()) {
        r.status = CandidateStatus::cannot_run;
        r.reason = std::move(why);
        out.push_back(std::move(r));
        continue;
      }
      try {
        const detail::PreparedCandidate& prepared = provider->prepare(name, device);
        const CandidateBench::Launcher launch = [&prepared](const GemmArgs& args,
                                                            cudaStream_t stream) {
          prepared.enqueue(args, stream);
        };
        measure_candidate(
            r, settings, best_ms, [&] { return bench.verify_prepared(name, launch); },
            [&](double give_up_ms) { return bench.time_prepared(name, launch, give_up_ms); });
      } catch (const std::exception& e) {
        record_launch_error(r, settings, e.what());
      }
      out.push_back(std::move(r));
    }
  }
}

}  // namespace tilemm::tuner
