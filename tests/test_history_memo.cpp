// The memo of the cache entries a budgeted tuning ranks by (src/dispatch/history_memo.hpp): an
// entry is read once per version, kept with its timed candidates only, and the memo is bounded.
#include <gtest/gtest.h>

#include <string>

#include "history_memo.hpp"
#include "tuning_history.hpp"

namespace tilemm::dispatch {
namespace {

CandidateResult candidate(const std::string& variant, CandidateStatus status, double ms,
                          int samples) {
  CandidateResult c;
  c.variant = variant;
  c.status = status;
  c.reason = "why";
  c.stats.median_ms = ms;
  c.stats.samples = samples;
  return c;
}

cache::StoredEntry entry(std::int64_t m, const std::string& tuned_at) {
  cache::StoredEntry e;
  e.device_key = "model";
  e.M = m;
  e.N = e.K = 64;
  e.problem_class = "a4-dense";
  e.winner = "tiled_t16_p0";
  e.median_ms = 1.0;
  e.tuned_at = tuned_at;
  e.candidates = {candidate("tiled_t16_p0", CandidateStatus::ok, 1.0, 20),
                  candidate("tiled_t32_p0", CandidateStatus::pruned, 2.0, 3),
                  candidate("tiled_t8_p0", CandidateStatus::pruned, 0.0, 0),
                  candidate("tiled_t8_p1", CandidateStatus::wrong_result, 0.5, 1),
                  candidate("rowsplit_h32", CandidateStatus::ok, 0.9, 20)};
  return e;
}

cache::StoredEntry header_of(cache::StoredEntry e) {
  e.candidates.clear();
  return e;
}

TEST(HistoryMemo, AnEntryIsReadOncePerVersionAndKeptWithItsTimedCandidates) {
  HistoryMemo memo;
  cache::StoredEntry stored = entry(128, "2026-12-01T00:00:00Z");
  int reads = 0;
  const auto read = [&](const cache::StoredEntry&) {
    ++reads;
    return std::optional<cache::StoredEntry>(stored);
  };
  for (int call = 0; call < 3; ++call) {
    const auto got = memo.entry(header_of(stored), read);
    ASSERT_TRUE(got);
    ASSERT_EQ(got->candidates.size(), 2u);
    EXPECT_EQ(got->candidates[0].variant, "tiled_t16_p0");
    EXPECT_EQ(got->candidates[1].variant, "tiled_t32_p0");
    for (const auto& c : got->candidates) {
      EXPECT_TRUE(counts_in_history(c)) << c.variant;
      EXPECT_TRUE(c.reason.empty());
    }
  }
  EXPECT_EQ(reads, 1);

  // A rewrite changes the header's version: read again, and the new candidates are kept.
  stored = entry(128, "2026-12-02T00:00:00Z");
  stored.candidates[0].stats.median_ms = 0.5;
  EXPECT_EQ(memo.entry(header_of(stored), read)->candidates[0].stats.median_ms, 0.5);
  EXPECT_EQ(memo.entry(header_of(stored), read)->candidates[0].stats.median_ms, 0.5);
  EXPECT_EQ(reads, 2);
  cache::StoredEntry other_winner = header_of(stored);
  other_winner.winner = "tiled_t32_p0";
  memo.entry(other_winner, read);
  EXPECT_EQ(reads, 3);
}

TEST(HistoryMemo, AnEntryGoneFromTheStoreIsNotKept) {
  HistoryMemo memo;
  const cache::StoredEntry stored = entry(128, "2026-12-01T00:00:00Z");
  bool present = true;
  int reads = 0;
  const auto read = [&](const cache::StoredEntry&) {
    ++reads;
    return present ? std::optional<cache::StoredEntry>(stored) : std::nullopt;
  };
  ASSERT_TRUE(memo.entry(header_of(stored), read));
  present = false;
  cache::StoredEntry rewritten = header_of(stored);
  rewritten.tuned_at = "2026-12-02T00:00:00Z";
  EXPECT_FALSE(memo.entry(rewritten, read));
  present = true;
  EXPECT_TRUE(memo.entry(header_of(stored), read));  // not kept while gone: read again
  EXPECT_EQ(reads, 3);
}

TEST(HistoryMemo, BeyondItsBoundTheMemoStartsAgain) {
  HistoryMemo memo;
  int reads = 0;
  const auto read = [&](const cache::StoredEntry& header) {
    ++reads;
    return std::optional<cache::StoredEntry>(entry(header.M, header.tuned_at));
  };
  const std::string at = "2026-12-01T00:00:00Z";
  for (std::size_t m = 1; m <= HistoryMemo::kMostKept; ++m)
    memo.entry(header_of(entry(static_cast<std::int64_t>(m), at)), read);
  memo.entry(header_of(entry(1, at)), read);
  EXPECT_EQ(reads, static_cast<int>(HistoryMemo::kMostKept));  // all still kept
  memo.entry(header_of(entry(HistoryMemo::kMostKept + 1, at)), read);
  memo.entry(header_of(entry(1, at)), read);
  EXPECT_EQ(reads, static_cast<int>(HistoryMemo::kMostKept) + 2);  // 1 was let go
}

}  // namespace
}  // namespace tilemm::dispatch
