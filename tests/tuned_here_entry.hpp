// The cache entry a tuning on this machine would store for a problem, won by a given candidate:
// fresh for this build and device, so that a dispatcher reading it serves that winner without
// tuning. For the GPU tests that choose what a shape runs.
#pragma once

#include <string>

#include "provenance.hpp"
#include "shape_key.hpp"
#include "tilemm/device.hpp"
#include "tuning_store.hpp"

namespace tilemm::testing {

inline cache::StoredEntry tuned_here_entry(const DeviceInfo& device, const Problem& problem,
                                           const std::string& winner) {
  cache::StoredEntry e;
  e.device_key = device.model_key();
  e.arch = device.arch();
  e.M = problem.M;
  e.N = problem.N;
  e.K = problem.K;
  e.problem_class = dispatch::class_of(problem);
  e.precision = problem.precision;
  e.candidate_set = dispatch::candidate_set_of(problem);
  e.winner = winner;
  e.median_ms = 0.01;
  e.tuned_at = "2026-12-03T09:00:00Z";
  e.tilemm_version = "test";
  e.versions = dispatch::running_versions(device, problem);
  CandidateResult win;
  win.variant = winner;
  win.stats = {0.01, 0.01, 0.0, 10};
  e.candidates = {win};
  return e;
}

}  // namespace tilemm::testing
