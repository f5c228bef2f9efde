// One field-by-field comparison of two cache entries, for the tests of the SQLite store and of
// the JSON export. Doubles are compared exactly: SQLite's REAL and the JSON text both keep a
// double's bits.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <tuple>

#include "tuning_store.hpp"

namespace tilemm::testing {

// `e` with no candidates: an entry as the preloaded headers hold it.
inline cache::StoredEntry without_candidates(cache::StoredEntry e) {
  e.candidates.clear();
  return e;
}

// How the candidate lists of the two entries line up: in the same order (the JSON export keeps
// it), or matched by variant name (the store returns them in key order).
enum class CandidateOrder { same, by_variant };

inline void expect_same_entry(const cache::StoredEntry& a, const cache::StoredEntry& b,
                              CandidateOrder order) {
  EXPECT_EQ(a.device_key, b.device_key);
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(std::tie(a.M, a.N, a.K), std::tie(b.M, b.N, b.K));
  EXPECT_EQ(a.problem_class, b.problem_class);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.candidate_set, b.candidate_set);
  EXPECT_EQ(a.winner, b.winner);
  EXPECT_EQ(a.median_ms, b.median_ms);
  EXPECT_EQ(a.tflops, b.tflops);
  EXPECT_EQ(a.margin, b.margin);
  EXPECT_EQ(a.tuned_at, b.tuned_at);
  EXPECT_EQ(a.tilemm_version, b.tilemm_version);
  EXPECT_EQ(a.versions.template_hash, b.versions.template_hash);
  EXPECT_EQ(a.versions.nvrtc_version, b.versions.nvrtc_version);
  EXPECT_EQ(a.versions.driver_version, b.versions.driver_version);
  EXPECT_EQ(a.source, b.source);
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (std::size_t i = 0; i < a.candidates.size(); ++i) {
    const auto& x = a.candidates[i];
    const auto* y = &b.candidates[i];
    if (order == CandidateOrder::by_variant)
      for (const auto& c : b.candidates)
        if (c.variant == x.variant) y = &c;
    EXPECT_EQ(x.variant, y->variant);
    EXPECT_EQ(x.status, y->status);
    EXPECT_EQ(x.reason, y->reason);
    EXPECT_EQ(x.stats.median_ms, y->stats.median_ms);
    EXPECT_EQ(x.stats.min_ms, y->stats.min_ms);
    EXPECT_EQ(x.stats.spread, y->stats.spread);
    EXPECT_EQ(x.stats.samples, y->stats.samples);
    EXPECT_EQ(x.compile_ms, y->compile_ms);
  }
}

}  // namespace tilemm::testing
