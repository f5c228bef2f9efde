// The preloaded entries with only their timed candidates (cache/preloaded.hpp,
// preloaded_timed_entries) and the cut the build makes (cache/timed_candidates.hpp): the full
// entries with the candidates the tuning history cannot use left out, and the same history from
// either, for every class and precision of the shipped files.
#include <gtest/gtest.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernel_sources.hpp"
#include "preloaded.hpp"
#include "row_split.hpp"
#include "stored_entry_check.hpp"
#include "synthetic_device.hpp"
#include "timed_candidates.hpp"
#include "tuning_history.hpp"

namespace tilemm::cache {
namespace {

using nlohmann::json;

using testing::without_candidates;

// The variants of `e` the cut keeps, in order: timed at least once, or the winner.
std::vector<std::string> kept_variants(const StoredEntry& e) {
  std::vector<std::string> kept;
  for (const auto& c : e.candidates)
    if (c.stats.samples > 0 || c.variant == e.winner) kept.push_back(c.variant);
  return kept;
}

std::vector<std::string> variants(const StoredEntry& e) {
  std::vector<std::string> out;
  for (const auto& c : e.candidates) out.push_back(c.variant);
  return out;
}

TEST(PreloadedTimed, AreTheShippedEntriesWithTheirTimedCandidatesAndWinner) {
  const auto& full = preloaded_entries(detail::why_not_a_known_name);
  const auto& timed = preloaded_timed_entries(detail::why_not_a_known_name);
  ASSERT_FALSE(full.empty());
  ASSERT_EQ(timed.size(), full.size());
  std::size_t full_candidates = 0, timed_candidates = 0;
  for (std::size_t i = 0; i < full.size(); ++i) {
    SCOPED_TRACE(full[i].winner);
    testing::expect_same_entry(without_candidates(timed[i]), without_candidates(full[i]),
                               testing::CandidateOrder::same);
    EXPECT_EQ(variants(timed[i]), kept_variants(full[i]));
    full_candidates += full[i].candidates.size();
    timed_candidates += timed[i].candidates.size();
  }
  EXPECT_LT(timed_candidates, full_candidates) << "the shipped files hold untimed candidates";
  // File by file: the build embedded what the cut makes of each shipped file, under its name.
  const auto& files = detail::embedded_preloaded();
  const auto& cut = detail::embedded_preloaded_timed();
  ASSERT_EQ(cut.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(std::string(files[i].file));
    EXPECT_EQ(cut[i].file, files[i].file);
    EXPECT_EQ(cut[i].source, with_timed_candidates_only(files[i].source));
    EXPECT_LT(cut[i].source.size(), files[i].source.size() / 2);
  }
}

// The history a budgeted tuning ranks by is the same from the cut entries as from the full ones,
// for every class and precision the shipped files hold.
TEST(PreloadedTimed, GiveTheTuningHistoryOfTheFullEntries) {
  const auto& full = preloaded_entries(detail::why_not_a_known_name);
  const auto& timed = preloaded_timed_entries(detail::why_not_a_known_name);
  DeviceInfo device = testing::synthetic_h200();
  device.nvrtc_version = 13000;
  device.driver_version = 13000;
  std::set<std::pair<std::string, Precision>> kinds;
  for (const auto& e : full) kinds.insert({e.problem_class, e.precision});
  std::size_t shapes = 0;
  for (const auto& [problem_class, precision] : kinds) {
    SCOPED_TRACE(problem_class);
    const auto from_full = dispatch::measured_shapes({}, full, device, problem_class, precision);
    const auto from_timed = dispatch::measured_shapes({}, timed, device, problem_class, precision);
    ASSERT_EQ(from_timed.size(), from_full.size());
    for (std::size_t i = 0; i < from_full.size(); ++i) {
      EXPECT_EQ(std::tie(from_timed[i].M, from_timed[i].N, from_timed[i].K),
                std::tie(from_full[i].M, from_full[i].N, from_full[i].K));
      EXPECT_EQ(from_timed[i].median_ms, from_full[i].median_ms);
    }
    shapes += from_full.size();
  }
  EXPECT_GT(shapes, 0u) << "the shipped entries apply to an H200 and give a history";
}

TEST(TimedCandidates, TheCutKeepsTheTimedCandidatesAndTheWinnerAndNothingElseChanges) {
  const json document = {
      {"format", "tilemm-tuning"},
      {"format_version", 3},
      {"entries",
       json::array({{{"winner", "b"},
                     {"m", 7},
                     {"note", "candidates [ { \"samples\": 0 } ]"},
                     {"candidates", json::array({{{"variant", "a"}, {"samples", 0}},
                                                 {{"variant", "b"}, {"samples", 0}},
                                                 {{"variant", "c"}, {"samples", 3}},
                                                 {{"variant", "d"}, {"samples", 0.5}}})}},
                    {{"winner", "x"}, {"m", 8}}})}};
  const json cut = json::parse(with_timed_candidates_only(document.dump(2)));
  json expected = document;
  expected["entries"][0]["candidates"] = json::array(
      {{{"variant", "b"}, {"samples", 0}}, {{"variant", "c"}, {"samples", 3}},
       {{"variant", "d"}, {"samples", 0.5}}});
  EXPECT_EQ(cut, expected);
  EXPECT_EQ(with_timed_candidates_only(document.dump(2)).find('\n'), std::string::npos)
      << "written without whitespace";
}

TEST(TimedCandidates, WhatIsNotATuningDocumentIsRefused) {
  EXPECT_THROW(with_timed_candidates_only("{\"entries\": [1, 2"), json::exception);
  EXPECT_THROW(with_timed_candidates_only("[]"), std::runtime_error);
  EXPECT_THROW(with_timed_candidates_only("{\"entries\": {}}"), std::runtime_error);
}

}  // namespace
}  // namespace tilemm::cache
