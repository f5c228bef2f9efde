// A cache entry with made-up but valid fields, for the tests of what carries entries: the JSON
// exchange format, the fleet's Redis store and tilemm-tune's cache commands.
#pragma once

#include <cstdint>
#include <string>

#include "tuning_store.hpp"

namespace tilemm::testing {

inline const std::string kH200Key = "NVIDIA H200|sm_90|132sm|143771MiB";

// The tuned entry of M x N x K (a4-dense, highest precision) on `device_key`, its arch read from
// the key, won by `winner` at 0.5 ms (1.25 TFLOP/s), with the winner's timing and one pruned
// candidate (naive, or tiled_t16_p0 where naive won).
inline cache::StoredEntry sample_entry(std::int64_t M, std::int64_t N, std::int64_t K,
                                       const std::string& winner = "tiled_t32_p0",
                                       const std::string& device_key = kH200Key) {
  cache::StoredEntry e;
  e.device_key = device_key;
  e.arch = device_key.substr(device_key.find("|sm_") + 1, 5);
  e.M = M;
  e.N = N;
  e.K = K;
  e.problem_class = "a4-dense";
  e.winner = winner;
  e.median_ms = 0.5;
  e.tflops = 1.25;
  e.margin = 0.125;
  e.tuned_at = "2026-11-29T10:11:12Z";
  e.tilemm_version = "0.1.0";
  e.versions = {"00112233aabbccdd", 13000, 13000};
  e.source = "tuned";
  CandidateResult win;
  win.variant = winner;
  win.stats = {0.5, 0.45, 0.01, 31};
  win.compile_ms = 20.0;
  CandidateResult lost;
  lost.variant = winner == "naive" ? "tiled_t16_p0" : "naive";
  lost.status = CandidateStatus::pruned;
  lost.reason = "slow";
  lost.stats = {4.0, 3.5, 0.0, 5};
  e.candidates = {win, lost};
  return e;
}

}  // namespace tilemm::testing
