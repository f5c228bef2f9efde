// The candidates of the providers (candidate_provider.hpp) in a search: listed for the problem,
// checked, then verified and timed on the same bench, with the same plan, error bound and pruning
// rule as the variants, so that the ranking compares them all. The tuner knows no provider by
// name: each is asked through the interface.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "candidate_bench.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {

// Under a budget (settings.budget_ms > 0) a provider's candidates are screened like the budgeted
// search's and only this many of the fastest are timed in full; the others are pruned.
inline constexpr std::size_t kProviderFinalists = 2;

// One result per candidate of the providers `problem` may draw on (all, or the non-vendor
// ones where !problem.vendor; settings.providers where set). Only where bench.runs_prepared().
// A provider that fails to list its candidates (no device, a library error) contributes none and
// is logged at info level; a candidate that fails is recorded with its status, never thrown.
// `best_ms` is the best median measured before them (infinity: none), the give-up rule's
// reference, which the candidates' own timings then lower.
std::vector<CandidateResult> measure_provider_candidates(const DeviceInfo& device,
                                                         const Problem& problem,
                                                         CandidateBench& bench,
                                                         const TuneSettings& settings,
                                                         double best_ms);

// The provider, of those a search of `problem` draws on (settings.providers, else
// detail::candidate_providers(problem)), whose prefix is detail::name_prefix(name); nullptr for a
// variant's name.
detail::CandidateProvider* provider_in_search(const Problem& problem, const TuneSettings& settings,
                                              const std::string& name);

// Times `provider`'s candidate `name`, which measure_provider_candidates verified on `bench`,
// with `plan` on inputs in `mode` (CandidateBench::time_prepared_in_mode), without a give-up.
TimingResult time_provider_candidate(const DeviceInfo& device, CandidateBench& bench,
                                     detail::CandidateProvider& provider, const std::string& name,
                                     const TimingPlan& plan, InputMode mode);

}  // namespace tilemm::tuner
