#include "stored_results.hpp"

#include <utility>

#include "log.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "shape_key.hpp"
#include "tflops.hpp"
#include "tilemm/error.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

StoredResults::StoredResults(GuardedStore& store, EntryOfHeader preloaded_with_candidates,
                             EntryList preloaded_headers, EntryList preloaded_timed)
    : store_(store),
      preloaded_with_candidates_(std::move(preloaded_with_candidates)),
      preloaded_headers_(std::move(preloaded_headers)),
      preloaded_timed_(std::move(preloaded_timed)) {}

std::optional<cache::StoredEntry> StoredResults::fresh_entry(const DeviceInfo& device,
                                                             const Problem& problem,
                                                             bool with_candidates) {
  return store_.with(
      "cache lookup failed, treating as a miss", std::optional<cache::StoredEntry>{},
      [&](ResultStore& store) -> std::optional<cache::StoredEntry> {
        return first_serving_entry(
            problem,
            [&](cache::CandidateSet set) {
              return store.find(device.model_key(), problem, class_of(problem), set,
                                with_candidates);
            },
            [&](const cache::StoredEntry& entry) {
              if (is_fresh(entry, running_versions(device, problem))) return true;
              log(LogLevel::info, "cached result for " + describe(problem) +
                                      " is stale (tuned under another driver, NVRTC, timing "
                                      "method or set of kernels for its shape)");
              return false;
            });
      });
}

std::optional<cache::StoredEntry> StoredResults::usable_entry(const DeviceInfo& device,
                                                              const Problem& problem) {
  auto entry = fresh_entry(device, problem, true);
  if (entry && !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
  return entry;
}

// The same lookup over the entries with or without their candidates: both hold the same entries
// (cache/preloaded.hpp), so the answer's winner does not depend on which is asked.
std::optional<cache::StoredEntry> StoredResults::preloaded_entry(const DeviceInfo& device,
                                                                 const Problem& problem,
                                                                 bool with_candidates) {
  const cache::BuildVersions running = running_versions(device, problem);
  const auto find_in = [&](const std::vector<cache::StoredEntry>& entries) {
    return first_serving_entry(
        problem,
        [&](cache::CandidateSet set) {
          return cache::find_preloaded(entries, device.model_key(), device.arch(), problem.M,
                                       problem.N, problem.K, class_of(problem), running,
                                       problem.precision, set);
        },
        [](const cache::StoredEntry&) { return true; });
  };
  // The headers first: a miss (most shapes of an application) reads no candidate table, and a hit
  // reads its own entry's alone.
  auto header = find_in(preloaded_headers());
  if (!header || !with_candidates) return header;
  return preloaded_with_candidates_(*header);
}

std::optional<std::string> StoredResults::stored_winner(const DeviceInfo& device,
                                                        const Problem& problem) {
  std::optional<cache::StoredEntry> entry = fresh_entry(device, problem, false);
  if (!entry || !why_unusable(entry->winner, device, problem).empty())
    entry = preloaded_entry(device, problem, false);
  if (!entry || !why_unusable(entry->winner, device, problem).empty()) return std::nullopt;
  return entry->winner;
}

std::vector<cache::StoredEntry> StoredResults::listed(const DeviceInfo& device,
                                                     bool with_candidates) {
  return store_.with("cache listing failed", std::vector<cache::StoredEntry>{},
                     [&](ResultStore& store) {
                       return store.list(device.model_key(), with_candidates);
                     });
}

std::optional<cache::StoredEntry> StoredResults::with_candidates(const cache::StoredEntry& header) {
  return store_.with("cache lookup failed", std::optional<cache::StoredEntry>{},
                     [&](ResultStore& store) {
                       return store.find(header.device_key, problem_of(header),
                                         header.problem_class, header.candidate_set, true);
                     });
}

ResultSource source_of(const std::string& stored) {
  if (stored == "imported") return ResultSource::imported;
  if (stored == "preloaded") return ResultSource::preloaded;
  return ResultSource::cache;
}

AutotuneResult to_result(const cache::StoredEntry& e, const Problem& problem, ResultSource source) {
  AutotuneResult r;
  r.device_key = e.device_key;
  r.problem = problem;
  r.problem_class = e.problem_class;
  r.winner = e.winner;
  r.median_ms = e.median_ms;
  r.tflops = e.tflops;
  r.margin = e.margin;
  r.candidates = e.candidates;
  // Stored rows come back in key order; present them ranked like a fresh tuning.
  if (!r.candidates.empty()) {
    try {
      tuner::rank_candidates(r.candidates);
    } catch (const Error&) {  // an entry without an ok candidate: keep the stored order
    }
  }
  r.source = source;
  r.tuned_at = e.tuned_at;
  return r;
}

cache::StoredEntry entry_of(const DeviceInfo& device, const Problem& problem,
                            const tuner::TuneOutcome& outcome, const std::string& tuned_at) {
  cache::StoredEntry e;
  e.device_key = device.model_key();
  e.M = problem.M;
  e.N = problem.N;
  e.K = problem.K;
  e.problem_class = class_of(problem);
  e.precision = problem.precision;
  e.candidate_set = candidate_set_of(problem);
  e.winner = outcome.winner;
  e.median_ms = outcome.median_ms;
  e.tflops = detail::tflops(problem, outcome.median_ms);
  e.margin = outcome.margin;
  e.tuned_at = tuned_at;
  e.tilemm_version = TILEMM_VERSION;
  e.versions = running_versions(device, problem);
  e.arch = device.arch();
  e.source = "tuned";
  e.candidates = outcome.candidates;
  return e;
}

}  // namespace tilemm::dispatch
