// The rotated look at a search's finalists (docs/tuning.md, "The rotated look at the finalists"):
// a problem timed on the same buffers every launch (L2-warm: timing_method.hpp) has its finalists
// timed on rotated copies of its inputs too (L2-cold), and the one least behind the reference
// (cuBLAS's own call), or else the best, in either mode wins. A kernel that wins only from the L2
// would otherwise run a caller whose inputs are not there slower than a runner-up that is as fast
// either way; one that wins only rotated, a caller whose inputs are in the L2 slower than one
// nearly as fast rotated.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "candidate_bench.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {

// A candidate still in the running at the end of a search (status ok, its median timed in the
// bench's own mode), or the reference, with the way to time it again.
struct Finalist {
  CandidateResult* result = nullptr;
  std::string kind;  // empty: tilemm's own kernels; else its provider's prefix ("cublaslt")
  std::function<TimingResult(const TimingPlan& plan, InputMode mode)> time;
  double rotated_ms = -1.0;  // its median on rotated inputs, once timed
  // The call an application would otherwise make (CandidateProvider::reference): timed rotated
  // and measured against even where the search dropped it (its median then from the screening).
  // Whoever builds the contenders admits a reference only with a median (status ok or pruned).
  bool reference = false;
};

// How many finalists the look times at most: the best two by median and the best of each kind.
inline constexpr std::size_t kRotatedFinalists = 4;

// The finalists among `contenders` (those still ok): the best two by median, then the best of
// each kind not among them, in median order, at most kRotatedFinalists. Ties go by name.
std::vector<Finalist*> choose_finalists(std::vector<Finalist>& contenders);

// Where bench.input_mode() is same_buffers (else nothing): times the finalists, and the reference
// provider's fastest candidate (Finalist::reference) where it has a median, on rotated inputs with
// the bench's plan in alternating passes (kFinalPasses). The yardstick of each mode is the
// reference's median there, else the best median of that mode; a contender's worse ratio is
// max(its median over the yardstick's, its rotated median over the yardstick's), and the one
// still in the running, timed both ways, whose worse ratio is least wins. An exhaustive search
// (settings.budget_ms 0) first times rotated, fastest first, every other contender that could
// still win: its median over the yardstick's is below the least worse ratio found, or (with no
// reference) its median is below the best rotated one. Every contender the ranking by median
// would put ahead of the winner (rank_candidates) is marked pruned, with both its medians and the
// winner's in its reason; every candidate keeps its median in the bench's mode (what a caller
// reusing its buffers sees), and each rotated median is logged at debug level. Under a budget
// the look is shortened to the time left before `deadline_ms` (on settings.now_ms), and runs past
// it at its least only where that costs at most kFinalRoundPastBudget of the budget; otherwise it
// is skipped and the ranking by median decides. A finalist whose timing throws is a launch error.
void look_at_rotated_inputs(std::vector<Finalist>& contenders, CandidateBench& bench,
                            const TuneSettings& settings, double deadline_ms);

}  // namespace tilemm::tuner
