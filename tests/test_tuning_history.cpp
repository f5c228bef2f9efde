// What a budgeted tuning ranks by (src/dispatch/tuning_history.hpp): the measured shapes of the
// device's model and the problem's class, fresh, the cache's before the preloaded ones.
#include <gtest/gtest.h>

#include <cstdint>

#include "family_fingerprint.hpp"
#include "provenance.hpp"
#include "synthetic_device.hpp"
#include "tuning_history.hpp"

namespace tilemm::dispatch {
namespace {

DeviceInfo device() {
  DeviceInfo d = testing::synthetic_h200();
  d.nvrtc_version = 13000;
  d.driver_version = 13000;
  return d;
}

const std::uint64_t kL2 = device().l2_bytes;

CandidateResult timed(const std::string& variant, CandidateStatus status, double ms, int samples) {
  CandidateResult c;
  c.variant = variant;
  c.status = status;
  c.stats.median_ms = ms;
  c.stats.samples = samples;
  return c;
}

cache::StoredEntry entry(std::int64_t n, const std::string& problem_class, const std::string& source,
                         std::vector<CandidateResult> candidates) {
  cache::StoredEntry e;
  e.device_key = device().model_key();
  e.M = e.N = e.K = n;
  e.problem_class = problem_class;
  e.winner = candidates.front().variant;
  e.versions =
      running_versions(device(), Problem::dense(n, n, n, problem_class == "a4-dense" ? 4 : 1));
  e.arch = device().arch();
  e.source = source;
  e.candidates = std::move(candidates);
  return e;
}

TEST(TuningHistory, TimedCandidatesOfFreshEntriesOfTheClassCountAndTheCacheComesFirst) {
  cache::StoredEntry stale = entry(300, "a4-dense", "tuned", {timed("tiled_t8_p0", CandidateStatus::ok, 1, 30)});
  stale.versions.nvrtc_version += 10;
  const std::vector<cache::StoredEntry> cached = {
      entry(512, "a4-dense", "tuned",
            {timed("tiled_t16_p0", CandidateStatus::ok, 2.0, 30),
             timed("tiled_t32_p0", CandidateStatus::pruned, 3.0, 3),   // dropped by a round
             timed("tiled_t8_p0", CandidateStatus::pruned, 0.0, 0),    // never timed
             timed("tiled_t8_p1", CandidateStatus::wrong_result, 0.5, 1),
             timed("rowsplit_h256", CandidateStatus::ok, 1.0, 30)}),
      entry(700, "a1-dense", "tuned", {timed("tiled_t16_p0", CandidateStatus::ok, 1, 30)}),
      stale};
  const std::vector<cache::StoredEntry> preloaded = {
      entry(512, "a4-dense", "preloaded", {timed("tiled_t16_p0", CandidateStatus::ok, 9.0, 30)}),
      entry(4096, "a4-dense", "preloaded", {timed("tiled_t16_p0", CandidateStatus::ok, 40.0, 30)})};
  const auto shapes = measured_shapes(cached, preloaded, device(), "a4-dense");
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].M, 512);
  EXPECT_EQ(shapes[0].median_ms, (std::map<std::string, double>{{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 3.0}}));
  EXPECT_EQ(shapes[1].M, 4096);
  EXPECT_EQ(shapes[1].median_ms.at("tiled_t16_p0"), 40.0);
}

// An entry of the same kernels timed by an earlier timing method (it stored the kernels'
// fingerprint alone, before tuner::kTimingMethodVersion joined it) is stale, in the cache or
// preloaded: its medians mean something else and must not rank this build's candidates.
TEST(TuningHistory, ResultsTimedByAnotherTimingMethodAreStaleAndDoNotCount) {
  for (const std::string source : {"tuned", "preloaded"}) {
    cache::StoredEntry old = entry(512, "a4-dense", source, {timed("tiled_t16_p0", CandidateStatus::ok, 2.0, 30)});
    old.versions.template_hash = detail::kernels_fingerprint(problem_of(old), 90);
    EXPECT_FALSE(is_fresh(old, running_versions(device(), old))) << source;
    EXPECT_TRUE(measured_shapes({old}, {old}, device(), "a4-dense").empty()) << source;
  }
}

// The results hash: 16 hex digits like the kernels' fingerprint it versions, one per problem and
// compute capability, different from the fingerprint alone (the timing method joins it), equal
// for two problems exactly when their fingerprints are.
TEST(ResultsHash, VersionsTheKernelsThatCanServeAProblemAndTheTimingMethod) {
  const Problem problems[] = {Problem::dense(1, 4096, 4096), Problem::dense(4096, 1, 4096),
                              Problem::dense(4096, 4096, 4096), Problem::dense(4097, 4097, 4097),
                              Problem::dense(2048, 2048, 2048)};
  for (const Problem& p : problems) {
    const std::string h = results_hash(p, 90, kL2);
    EXPECT_EQ(h.size(), 16u);
    EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos) << h;
    EXPECT_NE(h, detail::kernels_fingerprint(p, 90));
    EXPECT_EQ(running_versions(device(), p).template_hash, h);
    for (const Problem& q : problems)
      EXPECT_EQ(results_hash(p, 90, kL2) == results_hash(q, 90, kL2),
                detail::kernels_fingerprint(p, 90) == detail::kernels_fingerprint(q, 90));
  }
}

TEST(TuningHistory, AnotherModelsCacheEntriesDoNotCount) {
  auto e = entry(512, "a4-dense", "tuned", {timed("tiled_t16_p0", CandidateStatus::ok, 2.0, 30)});
  e.device_key = "another model";
  EXPECT_TRUE(measured_shapes({e}, {}, device(), "a4-dense").empty());
}

// A history reads the nearest fresh entries of the problem's class and precision, a bounded
// number of them however large the cache, nearest first.
TEST(TuningHistory, ATuningReadsTheNearestFreshEntriesOfItsClassAndPrecision) {
  const Problem problem = Problem::dense(1000, 1000, 1000, 4);
  const auto one = [](std::int64_t n) {
    return entry(n, "a4-dense", "tuned", {timed("tiled_t16_p0", CandidateStatus::ok, 1.0, 30)});
  };
  std::vector<cache::StoredEntry> headers;
  const std::int64_t count = static_cast<std::int64_t>(kHistoryEntries) + 20;
  for (std::int64_t i = count; i >= 1; --i) headers.push_back(one(1000 + 7 * i));  // far to near
  cache::StoredEntry stale = one(1000);
  stale.versions.nvrtc_version += 10;
  cache::StoredEntry medium = one(1001);
  medium.precision = Precision::medium;
  cache::StoredEntry other_class = entry(1002, "a1-dense", "tuned", one(1).candidates);
  headers.insert(headers.begin() + 5, {stale, medium, other_class});

  const auto kept = history_headers(headers, device(), problem);
  ASSERT_EQ(kept.size(), kHistoryEntries);
  for (std::size_t i = 0; i < kept.size(); ++i)
    EXPECT_EQ(kept[i].M, 1000 + 7 * static_cast<std::int64_t>(i + 1)) << i;
  // Fewer than the bound: all of them.
  EXPECT_EQ(history_headers({one(2000), stale, one(900)}, device(), problem).size(), 2u);
}

}  // namespace
}  // namespace tilemm::dispatch
