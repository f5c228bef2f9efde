#include "provider_candidates.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>

#include "budgeted_search.hpp"
#include "candidate_provider.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::tuner {

CheckResult CandidateBench::verify_prepared(const std::string& name, const Launcher&) {
  return {CandidateStatus::launch_error, "this bench does not run provider candidates (" + name + ")"};
}

TimingResult CandidateBench::time_prepared(const std::string& name, const Launcher&,
                                           const TimingPlan&, double) {
  throw Error(ErrorKind::internal, "tilemm: this bench does not run provider candidates (" + name + ")");
}

namespace {

void require_own_mode(const CandidateBench& bench, InputMode mode, const std::string& name) {
  if (mode != bench.input_mode())
    throw Error(ErrorKind::internal, std::string("tilemm: this bench does not time on ") +
                                         input_mode_name(mode) + " inputs (" + name + ")");
}

}  // namespace

TimingResult CandidateBench::time_in_mode(const Variant& v, const TimingPlan& plan,
                                          double give_up_ms, InputMode mode) {
  require_own_mode(*this, mode, variant_name(v));
  return time_with(v, plan, give_up_ms);
}

TimingResult CandidateBench::time_prepared_in_mode(const std::string& name, const Launcher& launch,
                                                   const TimingPlan& plan, double give_up_ms,
                                                   InputMode mode) {
  require_own_mode(*this, mode, name);
  return time_prepared(name, launch, plan, give_up_ms);
}

namespace {

struct Listed {
  detail::CandidateProvider* provider;
  CandidateResult result;
};

// Every candidate of the providers, with cannot_run and skipped ones already decided.
std::vector<Listed> list_candidates(const DeviceInfo& device, const Problem& problem,
                                    const TuneSettings& settings) {
  std::vector<Listed> listed;
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
      if (!record_skip(r, settings)) {
        if (std::string why = provider->why_cannot_run(name, device, problem); !why.empty()) {
          r.status = CandidateStatus::cannot_run;
          r.reason = std::move(why);
        }
      }
      listed.push_back({provider, std::move(r)});
    }
  }
  return listed;
}

// Verifies (when `verify`) and times one listed candidate with `plan`; failures are recorded.
void measure(Listed& c, const DeviceInfo& device, CandidateBench& bench,
             const TuneSettings& settings, const TimingPlan& plan, bool verify, double& best_ms) {
  try {
    const detail::PreparedCandidate& prepared = c.provider->prepare(c.result.variant, device);
    const CandidateBench::Launcher launch = [&prepared](const GemmArgs& args, cudaStream_t stream) {
      prepared.enqueue(args, stream);
    };
    const std::string& name = c.result.variant;
    measure_candidate(
        c.result, settings, best_ms,
        [&] { return verify ? bench.verify_prepared(name, launch) : CheckResult{}; },
        [&](double give_up_ms) { return bench.time_prepared(name, launch, plan, give_up_ms); });
  } catch (const std::exception& e) {
    record_launch_error(c.result, settings, e.what());
  }
}

}  // namespace

std::vector<CandidateResult> measure_provider_candidates(const DeviceInfo& device,
                                                         const Problem& problem,
                                                         CandidateBench& bench,
                                                         const TuneSettings& settings,
                                                         double best_ms) {
  std::vector<CandidateResult> out;
  if (!bench.runs_prepared()) return out;
  std::vector<Listed> listed = list_candidates(device, problem, settings);
  const TimingPlan full = bench.timing_plan();
  const bool budgeted = settings.budget_ms > 0;
  if (!budgeted) {
    for (auto& c : listed)
      if (c.result.status == CandidateStatus::ok)
        measure(c, device, bench, settings, full, true, best_ms);
  } else {
    // Under a budget, as the budgeted search treats its candidates: each verified and screened
    // with a few launches, then only the fastest kProviderFinalists timed in full, so that a
    // provider's candidates cost the budget a screening each, not a full timing each.
    double screened_best = std::numeric_limits<double>::infinity();
    const TimingPlan screen = screening_plan(full);
    std::vector<Listed*> running;
    for (auto& c : listed) {
      if (c.result.status != CandidateStatus::ok) continue;
      measure(c, device, bench, settings, screen, true, screened_best);
      if (c.result.status == CandidateStatus::ok) running.push_back(&c);
    }
    std::stable_sort(running.begin(), running.end(), [](const Listed* a, const Listed* b) {
      return a->result.stats.median_ms < b->result.stats.median_ms;
    });
    for (std::size_t i = 0; i < running.size(); ++i) {
      CandidateResult& r = running[i]->result;
      if (i < kProviderFinalists) {
        measure(*running[i], device, bench, settings, full, false, best_ms);
        continue;
      }
      r.status = CandidateStatus::pruned;
      char text[160];
      std::snprintf(text, sizeof text,
                    "dropped after the screening of the budgeted search: %.4f ms against %.4f ms "
                    "for the best",
                    r.stats.median_ms, running.front()->result.stats.median_ms);
      r.reason = text;
    }
  }
  for (auto& c : listed) out.push_back(std::move(c.result));
  return out;
}

detail::CandidateProvider* provider_in_search(const Problem& problem, const TuneSettings& settings,
                                              const std::string& name) {
  const auto providers =
      settings.providers ? *settings.providers : detail::candidate_providers(problem);
  const std::string first = detail::name_prefix(name);
  for (detail::CandidateProvider* provider : providers)
    if (provider->prefix() == first) return provider;
  return nullptr;
}

TimingResult time_provider_candidate(const DeviceInfo& device, CandidateBench& bench,
                                     detail::CandidateProvider& provider, const std::string& name,
                                     const TimingPlan& plan, InputMode mode) {
  const detail::PreparedCandidate& prepared = provider.prepare(name, device);
  const CandidateBench::Launcher launch = [&prepared](const GemmArgs& args, cudaStream_t stream) {
    prepared.enqueue(args, stream);
  };
  return bench.time_prepared_in_mode(name, launch, plan, std::numeric_limits<double>::infinity(),
                                     mode);
}

}  // namespace tilemm::tuner
