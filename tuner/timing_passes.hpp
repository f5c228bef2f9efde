// Timing candidates in passes that alternate their order, so that none is always timed first,
// while the GPU is coolest (docs/tuning.md, "Power and the order of timings"): how many passes,
// each pass's share of a plan, and a candidate's stats over its passes. The budgeted search's
// final round and the rotated look at the finalists (rotated_finalists.hpp) time this way.
#pragma once

#include <vector>

#include "candidate_bench.hpp"

namespace tilemm::tuner {

// One candidate's stats over its passes: the median of the pass medians (with four, the mean of
// the middle two, so that one pass at another clock moves it little), the least launch, every
// sample, and the largest pass spread.
TimingStats over_passes(std::vector<TimingStats> passes);

// How many passes a final round makes with the bench's plan `bench_plan` (kFinalPasses, or one
// where the plan has too few samples to share out).
int final_passes(const TimingPlan& bench_plan);

// The plan of one of `passes` passes of a round whose plan is `round_plan`: its share of each
// count (at least one launch each) and one warm-up.
TimingPlan pass_plan(const TimingPlan& round_plan, int passes);

}  // namespace tilemm::tuner
