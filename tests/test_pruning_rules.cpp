// The pruning rules (tuner/pruning_rules.hpp) with the fake bench: which rule prunes which
// candidate and why, that they shape the budgeted search, and that the exhaustive search
// verifies and times in full every candidate that can run. No GPU needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fake_bench.hpp"
#include "family_registry.hpp"
#include "pruning_rules.hpp"
#include "synthetic_device.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

using testing::FakeBench;

// 512 x 512 on 132 SMs: tiled_t32 gives 256 blocks, the 256 x 128 warptile 8 (underfill), and
// the padded variant copies operands that are aligned already (its family's hint).
const Problem kSquare = Problem::square(512);
const std::string kFills = "tiled_t32_p0";
const std::string kUnderfilled = "warptile_bm256_bn128_bk16_wm64_wn64_tm8_tn4_v4_mb1";
const std::string kHinted = "padded_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4";

// The fake compiler, recording what the search asked it to compile (from several threads).
struct CompileLog {
  std::set<std::string> names;
  std::mutex mutex;
  Compiler recorder() {
    return [this](const Variant& v, const std::string& arch) {
      std::lock_guard<std::mutex> lock(mutex);
      names.insert(variant_name(v));
      return testing::fake_compile(v, arch);
    };
  }
};

std::vector<Variant> variants(const std::vector<std::string>& names) {
  std::vector<Variant> out;
  for (const auto& n : names) out.push_back(parse_variant(n));
  return out;
}

// budget_ms 0: the exhaustive search. Above 0 the clock stands still, so that the budget never
// runs out and the selection keeps every candidate: what is pruned is the rules' doing.
TuneSettings settings_for(const std::vector<std::string>& names, double budget_ms,
                          CompileLog& log) {
  TuneSettings s;
  s.compile = log.recorder();
  s.compile_threads = 2;
  s.space = variants(names);
  s.budget_ms = budget_ms;
  s.now_ms = [] { return 0.0; };
  return s;
}

const CandidateResult& find(const TuneOutcome& out, const std::string& name) {
  for (const auto& c : out.candidates)
    if (c.variant == name) return c;
  throw std::runtime_error("no candidate " + name);
}

std::set<std::string> timed(const FakeBench& bench) {
  std::set<std::string> names(bench.timed.begin(), bench.timed.end());
  return names;
}

TEST(PruningRules, NameTheRuleThatPrunesEachCandidateAndWhy) {
  const auto device = testing::synthetic_h200();
  const CheapPruningRules rules(device, kSquare, variants({kFills, kUnderfilled, kHinted}));
  EXPECT_EQ(rules.most_blocks(), 256u);
  EXPECT_FALSE(rules.verdict(parse_variant(kFills)));
  const auto underfill = rules.verdict(parse_variant(kUnderfilled));
  ASSERT_TRUE(underfill);
  EXPECT_EQ(underfill->rule, PruningRule::underfill);
  EXPECT_EQ(underfill->reason,
            "its 8 blocks fill under a quarter of the 132 SMs, while smaller tiles fill them all");
  const auto hint = rules.verdict(parse_variant(kHinted));
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->rule, PruningRule::family_hint);
  EXPECT_NE(hint->reason.find("the problem is aligned"), std::string::npos) << hint->reason;
  EXPECT_STREQ(to_string(PruningRule::underfill), "underfill");
  EXPECT_STREQ(to_string(PruningRule::family_hint), "family hint");

  // The exempt candidate (a reduced precision's FP32 winner) is pruned by no rule.
  const CheapPruningRules exempting(device, kSquare, variants({kFills, kUnderfilled}), kUnderfilled);
  EXPECT_FALSE(exempting.verdict(parse_variant(kUnderfilled)));
}

TEST(PruningRules, UnderfillPrunesOnlyWhereACandidateTheHintsKeepFillsTheSms) {
  const auto device = testing::synthetic_h200();
  // Alone beside another large tile, nothing fills the SMs: underfill prunes neither.
  const std::string other = "warptile_bm128_bn128_bk16_wm64_wn32_tm8_tn4_v4_mb1";  // 16 blocks
  const CheapPruningRules alone(device, kSquare, variants({kUnderfilled, other}));
  EXPECT_LT(alone.most_blocks(), std::uint64_t(device.sm_count));
  EXPECT_FALSE(alone.verdict(parse_variant(kUnderfilled)));
  // A split of K that fills the SMs (64 tiles x 8 slices) but that its family's hint prunes (K =
  // 64 leaves 8 a slice) does not count: the 256 x 128 tiles' 8 blocks are not underfilled.
  const Problem shallow = Problem::dense(512, 512, 64, 4);
  const std::string split = "splitk_bm64_bn64_bk16_wm32_wn32_tm8_tn4_v4_s8";
  ASSERT_GE(detail::launched_blocks(parse_variant(split), shallow, device.sm_count),
            std::uint64_t(device.sm_count));
  const CheapPruningRules rules(device, shallow, variants({kUnderfilled, split}));
  ASSERT_TRUE(rules.verdict(parse_variant(split)));
  EXPECT_EQ(rules.verdict(parse_variant(split))->rule, PruningRule::family_hint);
  EXPECT_EQ(rules.most_blocks(), 8u);
  EXPECT_FALSE(rules.verdict(parse_variant(kUnderfilled)));
  // Beside a candidate the hints keep that fills them, it is.
  const CheapPruningRules filled(device, shallow, variants({kUnderfilled, split, kFills}));
  ASSERT_TRUE(filled.verdict(parse_variant(kUnderfilled)));
  EXPECT_EQ(filled.verdict(parse_variant(kUnderfilled))->rule, PruningRule::underfill);
}

TEST(PruningRules, TheWarmUpGiveUpAppliesOnlyUnderABudget) {
  TuneSettings s;
  s.prune_factor = 2.5;
  EXPECT_EQ(give_up_ms(s, 2.0), std::numeric_limits<double>::infinity());  // exhaustive
  s.budget_ms = 100;
  EXPECT_DOUBLE_EQ(give_up_ms(s, 2.0), 5.0);
  EXPECT_EQ(give_up_reason(s), "warm-up median above 2.5x the best so far");
}

// The case: where underfill and a family hint prune the fastest candidates, the
// exhaustive search still compiles, verifies and times them, and finds the faster kernel.
TEST(ExhaustiveSearch, TimesWhatUnderfillAndAFamilyHintWouldPruneAndFindsItFaster) {
  FakeBench bench;
  bench.median = {{kFills, 1.0}, {kUnderfilled, 0.2}, {kHinted, 0.3}};
  CompileLog log;
  const auto out = tune(testing::synthetic_h200(), kSquare, bench,
                        settings_for({kFills, kUnderfilled, kHinted}, 0, log));
  EXPECT_EQ(out.winner, kUnderfilled);
  EXPECT_EQ(log.names, (std::set<std::string>{kFills, kUnderfilled, kHinted}));
  EXPECT_EQ(timed(bench), (std::set<std::string>{kFills, kUnderfilled, kHinted}));
  for (const auto& name : {kFills, kUnderfilled, kHinted}) {
    EXPECT_EQ(find(out, name).status, CandidateStatus::ok) << name << ": " << find(out, name).reason;
    EXPECT_DOUBLE_EQ(find(out, name).stats.median_ms, bench.median.at(name));
  }
}

TEST(BudgetedSearch, StillPrunesWhatUnderfillAndAFamilyHintRuleOut) {
  FakeBench bench;
  bench.median = {{kFills, 1.0}, {kUnderfilled, 0.2}, {kHinted, 0.3}};
  CompileLog log;
  const auto out = tune(testing::synthetic_h200(), kSquare, bench,
                        settings_for({kFills, kUnderfilled, kHinted}, 2000, log));
  EXPECT_EQ(out.winner, kFills);
  EXPECT_EQ(log.names, std::set<std::string>{kFills});  // the pruned are never compiled
  EXPECT_EQ(timed(bench), std::set<std::string>{kFills});
  const CheapPruningRules rules(testing::synthetic_h200(), kSquare,
                                variants({kFills, kUnderfilled, kHinted}));
  for (const auto& name : {kUnderfilled, kHinted}) {
    EXPECT_EQ(find(out, name).status, CandidateStatus::pruned) << name;
    EXPECT_EQ(find(out, name).reason, rules.verdict(parse_variant(name))->reason) << name;
  }
}

// A candidate whose warm-up is over prune_factor x the best so far: timed in full by the
// exhaustive search (through time(), with nothing to give up at), given up under a budget.
TEST(ExhaustiveSearch, TimesInFullACandidateWhoseWarmUpIsFarAboveTheBest) {
  const std::string fast = "tiled_t8_p0", slow = "tiled_t16_p0";
  FakeBench bench;
  bench.median = {{fast, 1.0}, {slow, 10.0}};
  CompileLog log;
  TuneSettings s = settings_for({fast, slow}, 0, log);
  const auto out = tune(testing::synthetic_h200(), kSquare, bench, s);
  EXPECT_EQ(out.winner, fast);
  EXPECT_EQ(find(out, slow).status, CandidateStatus::ok) << find(out, slow).reason;
  EXPECT_DOUBLE_EQ(find(out, slow).stats.median_ms, 10.0);
  EXPECT_DOUBLE_EQ(out.margin, 9.0);
  EXPECT_TRUE(bench.timed_with.empty());  // the bench's own full plan, time()

  FakeBench budgeted_bench;
  budgeted_bench.median = bench.median;
  s.budget_ms = 2000;
  s.history = {{kSquare.M, kSquare.N, kSquare.K, bench.median}};  // the fast one is timed first
  const auto budgeted = tune(testing::synthetic_h200(), kSquare, budgeted_bench, s);
  EXPECT_EQ(budgeted.winner, fast);
  EXPECT_EQ(find(budgeted, slow).status, CandidateStatus::pruned);
  EXPECT_EQ(find(budgeted, slow).reason, "warm-up median above 3x the best so far");
}

// The exhaustive search reports its progress candidate by candidate, every one of them now.
TEST(ExhaustiveSearch, ReportsProgressOverEveryCandidateThatCanRun) {
  FakeBench bench;
  CompileLog log;
  TuneSettings s = settings_for({kFills, kUnderfilled, kHinted, "naive"}, 0, log);
  std::vector<std::pair<int, int>> progress;
  s.progress = [&](int done, int total) { progress.emplace_back(done, total); };
  tune(testing::synthetic_h200(), kSquare, bench, s);
  const std::vector<std::pair<int, int>> want = {{0, 4}, {1, 4}, {2, 4}, {3, 4}, {4, 4}};
  EXPECT_EQ(progress, want);
}

// It compiles a chunk at a time and times it before the next: the first candidate is announced
// long before the last compiles (tilemm-tune's watchdog hears from a worker within seconds, not
// after the whole space has compiled).
TEST(ExhaustiveSearch, TimesTheFirstCandidatesBeforeTheLastCompile) {
  FakeBench bench;
  const std::vector<std::string> names = {"naive",        "tiled_t8_p0", "tiled_t16_p0",
                                          "tiled_t32_p0", kUnderfilled,  kHinted};
  CompileLog log;
  TuneSettings s = settings_for(names, 0, log);
  s.compile_threads = 1;
  std::vector<std::string> events;  // one thread compiles: no lock needed
  s.compile = [&](const Variant& v, const std::string& arch) {
    events.push_back("compile " + variant_name(v));
    return testing::fake_compile(v, arch);
  };
  s.on_candidate = [&](const std::string& v) { events.push_back("measure " + v); };
  tune(testing::synthetic_h200(), kSquare, bench, s);
  const auto at = [&](const std::string& e) {
    return std::find(events.begin(), events.end(), e) - events.begin();
  };
  ASSERT_EQ(events.size(), 2 * names.size());
  EXPECT_LT(at("measure " + names.front()), at("compile " + names.back()));
  for (const auto& n : names) EXPECT_LT(at("compile " + n), at("measure " + n)) << n;
}

}  // namespace
}  // namespace tilemm::tuner
