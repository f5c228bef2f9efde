// The rotated look at the finalists (tuner/rotated_finalists.hpp) with the fake bench: a problem
// timed on the same buffers has its finalists, own kernels' and a vendor's alike, timed on
// rotated inputs too, and the one least behind the best of either mode wins; a problem timed
// rotated is timed once. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_bench.hpp"
#include "fake_vendor_provider.hpp"
#include "rotated_finalists.hpp"
#include "synthetic_device.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

using testing::FakeBench;

// The fake bench, which also runs a provider's candidates, scripted by name like variants.
class ProviderBench : public FakeBench {
 public:
  bool runs_prepared() const override { return true; }
  CheckResult verify_prepared(const std::string&, const Launcher&) override { return {}; }
  TimingResult time_prepared(const std::string& name, const Launcher& launch,
                             const TimingPlan& plan, double give_up_ms) override {
    return time_prepared_in_mode(name, launch, plan, give_up_ms, mode);
  }
  TimingResult time_prepared_in_mode(const std::string& name, const Launcher&, const TimingPlan&,
                                     double give_up_ms, InputMode in) override {
    return timing_of(name, give_up_ms, in);
  }
  // The scripted timing of `name`, for a look at finalists made by hand.
  TimingResult scripted(const std::string& name, InputMode in) { return timing_of(name, 1e9, in); }
};

const Problem kSmall = Problem::square(512);  // well within half the synthetic L2

TuneSettings settings_for(FakeBench& bench, double budget_ms,
                          detail::CandidateProvider* provider = nullptr) {
  TuneSettings s;
  s.compile = testing::fake_compile;
  s.compile_threads = 1;
  s.space = {parse_variant("tiled_t8_p0"), parse_variant("tiled_t16_p0"),
             parse_variant("tiled_t32_p0")};
  s.budget_ms = budget_ms;
  if (budget_ms > 0) s.now_ms = [&bench] { return bench.clock_ms; };
  s.providers = provider ? std::vector<detail::CandidateProvider*>{provider}
                         : std::vector<detail::CandidateProvider*>{};
  return s;
}

const CandidateResult& find(const TuneOutcome& out, const std::string& name) {
  const auto it = std::find_if(out.candidates.begin(), out.candidates.end(),
                               [&](const CandidateResult& c) { return c.variant == name; });
  if (it == out.candidates.end()) throw std::runtime_error("no candidate " + name);
  return *it;
}

std::size_t rotated_timings(const FakeBench& bench, const std::string& name) {
  return static_cast<std::size_t>(
      std::count(bench.timed_modes.begin(), bench.timed_modes.end(),
                 std::pair<std::string, InputMode>{name, InputMode::rotated}));
}

// tiled_t16_p0 is fastest on the same buffers and much slower rotated; tiled_t32_p0, close
// behind, is as fast either way: it wins, under a budget and in the exhaustive search, and the
// loser's reason names both its medians and the winner's.
TEST(RotatedFinalists, ARunnerUpEvenInBothModesBeatsAWinnerOnlyFromTheL2) {
  for (const double budget_ms : {500.0, 0.0}) {
    SCOPED_TRACE(budget_ms);
    FakeBench bench;
    bench.mode = InputMode::same_buffers;
    bench.median = {{"tiled_t8_p0", 3.0}, {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.1}};
    bench.rotated_median = {{"tiled_t16_p0", 2.0}};
    const auto out = tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, budget_ms));
    EXPECT_EQ(out.winner, "tiled_t32_p0");
    EXPECT_DOUBLE_EQ(out.median_ms, 1.1);  // what a caller reusing its buffers sees
    const CandidateResult& loser = find(out, "tiled_t16_p0");
    EXPECT_EQ(loser.status, CandidateStatus::pruned);
    EXPECT_DOUBLE_EQ(loser.stats.median_ms, 1.0);
    EXPECT_NE(loser.reason.find("1 ms on the same buffers, 2 ms rotated"), std::string::npos)
        << loser.reason;
    EXPECT_NE(loser.reason.find("tiled_t32_p0, the winner, took 1.1 ms and 1.1 ms (at most 1.1x"),
              std::string::npos)
        << loser.reason;
    EXPECT_GE(rotated_timings(bench, "tiled_t16_p0"), 1u);
    EXPECT_GE(rotated_timings(bench, "tiled_t32_p0"), 1u);
    // Slower on the same buffers than the best worse case: never timed rotated.
    EXPECT_EQ(rotated_timings(bench, "tiled_t8_p0"), 0u);
  }
}

// tiled_t16_p0 is fastest on the same buffers and 4% behind the best rotated; tiled_t32_p0 is the
// fastest rotated but 20% behind on the same buffers. The one least behind the best of either mode
// wins, though its own slower time is the larger: a caller whose inputs are in the L2 would lose
// 20% to the other, one whose inputs are not 4% to this one.
TEST(RotatedFinalists, TheWinnerIsTheLeastBehindTheBestOfEitherMode) {
  for (const double budget_ms : {500.0, 0.0}) {
    SCOPED_TRACE(budget_ms);
    FakeBench bench;
    bench.mode = InputMode::same_buffers;
    bench.median = {{"tiled_t8_p0", 3.0}, {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.2}};
    bench.rotated_median = {{"tiled_t16_p0", 1.3}, {"tiled_t32_p0", 1.25}};
    const auto out = tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, budget_ms));
    EXPECT_EQ(out.winner, "tiled_t16_p0");
    EXPECT_EQ(find(out, "tiled_t32_p0").status, CandidateStatus::ok);
    EXPECT_EQ(rotated_timings(bench, "tiled_t8_p0"), 0u);  // 3x behind, and slower than both rotated
  }
}

// In the exhaustive search a contender outside the finalists that could be the best rotated is
// timed rotated too, and wins where it is; under the budget only the finalists are.
TEST(RotatedFinalists, TheExhaustiveSearchTimesEveryContenderThatCouldWin) {
  for (const double budget_ms : {500.0, 0.0}) {
    SCOPED_TRACE(budget_ms);
    FakeBench bench;
    bench.mode = InputMode::same_buffers;
    bench.median = {{"tiled_t8_p0", 1.15}, {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.1}};
    bench.rotated_median = {{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 2.0}};
    const auto out = tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, budget_ms));
    if (budget_ms > 0) {
      EXPECT_EQ(out.winner, "tiled_t16_p0");
      EXPECT_EQ(rotated_timings(bench, "tiled_t8_p0"), 0u);
    } else {
      EXPECT_EQ(out.winner, "tiled_t8_p0");
      EXPECT_EQ(rotated_timings(bench, "tiled_t8_p0"), 1u);
      EXPECT_NE(find(out, "tiled_t16_p0").reason.find("1.74x the best rotated"), std::string::npos)
          << find(out, "tiled_t16_p0").reason;
    }
  }
}

// Where the best two on the same buffers are own kernels, the best vendor candidate is a finalist
// too: here it is the only one as fast rotated, and wins.
TEST(RotatedFinalists, TheBestCandidateOfEachProviderIsAFinalist) {
  testing::FakeVendorProvider vendor;
  ProviderBench bench;
  bench.mode = InputMode::same_buffers;
  bench.median = {{"tiled_t8_p0", 3.0},     {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.05},
                  {"fakevendor_a1", 1.2}, {"fakevendor_a2", 2.0}};
  bench.rotated_median = {{"tiled_t16_p0", 1.6}, {"tiled_t32_p0", 1.7}};
  const auto out =
      tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, 500.0, &vendor));
  EXPECT_EQ(out.winner, "fakevendor_a1");
  EXPECT_GE(rotated_timings(bench, "fakevendor_a1"), 1u);
  EXPECT_EQ(rotated_timings(bench, "fakevendor_a2"), 0u);  // not the best of its provider
  EXPECT_EQ(find(out, "tiled_t16_p0").status, CandidateStatus::pruned);
  EXPECT_EQ(find(out, "tiled_t32_p0").status, CandidateStatus::pruned);
  EXPECT_NE(find(out, "tiled_t32_p0").reason.find("1.05 ms on the same buffers, 1.7 ms rotated"),
            std::string::npos);
}

// With the reference among the providers (cuBLAS's cublasSgemm: what the application would
// otherwise call), each finalist is measured against it in each mode. The own kernel is 13% faster
// than it on the same buffers and 1.3% slower rotated; measured against the best of each mode
// instead it wins, as it is only 1.3% behind rotated where the reference is 13% behind on the
// same buffers.
TEST(RotatedFinalists, WithTheReferenceEachModeIsMeasuredAgainstIt) {
  for (const bool is_reference : {true, false}) {
    SCOPED_TRACE(is_reference);
    testing::FakeVendorProvider vendor("fakeref");
    vendor.is_reference = is_reference;
    ProviderBench bench;
    bench.mode = InputMode::same_buffers;
    bench.median = {{"tiled_t8_p0", 3.0}, {"tiled_t16_p0", 0.86}, {"tiled_t32_p0", 2.0},
                    {"fakeref_a1", 0.97}, {"fakeref_a2", 2.5}};
    bench.rotated_median = {{"tiled_t16_p0", 1.026}, {"fakeref_a1", 1.013}};
    const auto out =
        tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, 500.0, &vendor));
    EXPECT_EQ(out.winner, is_reference ? "fakeref_a1" : "tiled_t16_p0");
    if (is_reference) {
      const std::string& reason = find(out, "tiled_t16_p0").reason;
      EXPECT_NE(reason.find("1.01x fakeref_a1 rotated"), std::string::npos) << reason;
      EXPECT_NE(reason.find("(at most 1x fakeref_a1 in either mode)"), std::string::npos) << reason;
    }
  }
}

// The reference is timed rotated and measured against even where the search dropped it: here a
// second provider's candidate, 0.5% behind the reference rotated, wins over an own kernel 6% behind
// it on the same buffers, which the best of each mode would have chosen (7.3% behind the best on
// the same buffers, where the other is 7.5% behind the best rotated).
TEST(RotatedFinalists, AReferenceTheSearchDroppedIsStillTheYardstick) {
  for (const bool is_reference : {true, false}) {
    SCOPED_TRACE(is_reference);
    ProviderBench bench;
    bench.mode = InputMode::same_buffers;
    bench.median = {{"own", 0.0567}, {"lt", 0.0529}, {"ref", 0.0533}};
    bench.rotated_median = {{"own", 0.0574}, {"lt", 0.0617}, {"ref", 0.0625}};
    std::vector<CandidateResult> results(3);
    const char* names[] = {"own", "lt", "ref"};
    const char* kinds[] = {"", "lt", "ref"};
    std::vector<Finalist> contenders;
    for (std::size_t i = 0; i < results.size(); ++i) {
      results[i].variant = names[i];
      results[i].stats.median_ms = bench.median.at(names[i]);
      const auto time = [&bench, name = std::string(names[i])](const TimingPlan&, InputMode mode) {
        return bench.scripted(name, mode);
      };
      contenders.push_back({&results[i], kinds[i], time, -1.0, i == 2 && is_reference});
    }
    results[2].status = CandidateStatus::pruned;  // dropped by the screening
    results[2].reason = "dropped after the screening";
    TuneSettings settings;
    settings.budget_ms = 0;
    look_at_rotated_inputs(contenders, bench, settings, 0.0);
    EXPECT_EQ(rotated_timings(bench, "ref"), is_reference ? 4u : 0u);
    EXPECT_EQ(results[2].status, CandidateStatus::pruned);  // measured against, never a winner
    // The loser faster on the same buffers than the winner is pruned by the look.
    EXPECT_EQ(results[1].status, is_reference ? CandidateStatus::ok : CandidateStatus::pruned);
    EXPECT_EQ(results[0].status, CandidateStatus::ok);
  }
}

// A problem timed rotated (the bench's mode) is timed once: no timing on other inputs, and the
// fastest wins as before.
TEST(RotatedFinalists, AProblemTimedRotatedGetsNoSecondLook) {
  for (const double budget_ms : {500.0, 0.0}) {
    SCOPED_TRACE(budget_ms);
    FakeBench bench;  // rotated, the fakes' default
    bench.median = {{"tiled_t8_p0", 3.0}, {"tiled_t16_p0", 1.0}, {"tiled_t32_p0", 1.1}};
    bench.rotated_median = {{"tiled_t16_p0", 2.0}};  // another mode's time, never asked for
    const auto out = tune(testing::synthetic_h200(), kSmall, bench, settings_for(bench, budget_ms));
    EXPECT_EQ(out.winner, "tiled_t16_p0");
    EXPECT_EQ(find(out, "tiled_t32_p0").status, CandidateStatus::ok);
    EXPECT_TRUE(find(out, "tiled_t32_p0").reason.empty());
    for (const auto& [name, mode] : bench.timed_modes) EXPECT_EQ(mode, InputMode::rotated) << name;

    // The same search on the same buffers times the same launches there, plus the rotated look.
    FakeBench warm;
    warm.mode = InputMode::same_buffers;
    warm.median = bench.median;
    tune(testing::synthetic_h200(), kSmall, warm, settings_for(warm, budget_ms));
    std::size_t same = 0;
    for (const auto& [name, mode] : warm.timed_modes) same += mode == InputMode::same_buffers;
    EXPECT_EQ(same, bench.timed_modes.size());
    EXPECT_GT(warm.timed_modes.size(), same);
  }
}

// The finalists: the best two by median, then the best of each other kind, at most four.
TEST(RotatedFinalists, FinalistsAreTheBestTwoAndTheBestOfEachKind) {
  std::vector<CandidateResult> results(6);
  const char* names[] = {"own1", "own2", "own3", "v1", "w1", "x1"};
  const char* kinds[] = {"", "", "", "v", "w", "x"};
  const double medians[] = {1.0, 1.1, 1.2, 1.3, 1.4, 1.5};
  std::vector<Finalist> contenders;
  for (std::size_t i = 0; i < results.size(); ++i) {
    results[i].variant = names[i];
    results[i].stats.median_ms = medians[i];
    contenders.push_back({&results[i], kinds[i], nullptr});
  }
  std::vector<std::string> chosen;
  for (const Finalist* f : choose_finalists(contenders)) chosen.push_back(f->result->variant);
  EXPECT_EQ(chosen, (std::vector<std::string>{"own1", "own2", "v1", "w1"}));
  results[0].status = CandidateStatus::launch_error;  // no longer in the running
  chosen.clear();
  for (const Finalist* f : choose_finalists(contenders)) chosen.push_back(f->result->variant);
  EXPECT_EQ(chosen, (std::vector<std::string>{"own2", "own3", "v1", "w1"}));
}

}  // namespace
}  // namespace tilemm::tuner
