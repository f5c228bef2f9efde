// Row-split plans (row_split.hpp) as ordinary candidates of the search: for each core height
// worth trying, the plan's two parts are tuned as shapes of their own with the same tuner (or
// take a winner already known for them), and the plan, both parts' winners back to back, is
// verified and timed on the bench like any variant. Nothing here looks at a cache or dispatches:
// the caller stores the parts' outcomes with the shape's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "candidate_bench.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {

// A part of a plan, tuned while the plan was: a shape of its own, to be stored as one.
struct TunedPart {
  Problem problem;
  TuneOutcome outcome;
};

struct ShapeTuning {
  TuneOutcome outcome;           // the shape's: every variant and every plan, ranked
  std::vector<TunedPart> parts;  // the parts tuned for its plans (not those with a known winner)
};

struct PlanSettings {
  // The bench for a part's problem. Required when a plan is tried and a part has no known winner.
  std::function<std::unique_ptr<CandidateBench>(const Problem& part)> bench_for;
  // Winners already known for parts (by the part's M; N, K and the class are the shape's), used
  // instead of tuning the part. The caller checked that each can run its part; a winner that is
  // itself a plan makes the plan cannot_run (plans do not nest).
  std::map<std::int64_t, std::string> known_winners;
  // For a tuning below highest: the winners of the parts' highest (FP32) results, by the part's
  // M; each is the TuneSettings::highest_winner of that part's tuning.
  std::map<std::int64_t, std::string> highest_part_winners;
};

// tune(), then one more candidate per row_split_heights(problem), named row_split_name(h) (and
// the plan settings.highest_winner names, tried whatever the budget says, with its parts tuned
// at the problem's precision under a share of the budget, unless known). A
// plan's reason names its parts' winners ("rows 0-1023: <core>; rows 1024-1099: <rest>"), after
// any other reason. settings.skip and settings.on_candidate apply to plans as to variants, and
// settings (skip, hooks, progress) to the parts' tunings. A plan whose part cannot be tuned (no
// correct candidate) or whose bench fails is a launch error. Throws like tune() when nothing,
// plan or variant, is correct. Cost: tune() of the shape plus, per plan, up to two tunings of
// its parts and one plan timing.
ShapeTuning tune_with_plans(const DeviceInfo& device, const Problem& problem, CandidateBench& bench,
                            const TuneSettings& settings, const PlanSettings& plans);

}  // namespace tilemm::tuner
