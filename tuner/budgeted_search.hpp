// The budgeted search (docs/tuning.md, "Budgeted search"): rank the candidates by what the device
// already measured, keep as many of the best-ranked (plus an exploration set) as the budget can
// time, and time those by successive halving, stopping at the deadline.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "candidate_bench.hpp"
#include "candidate_ranking.hpp"
#include "search_candidate.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {

// How many candidates a budget of `budget_ms` can verify and time when one launch takes about
// `launch_ms`: each costs kCandidateOverheadMs (its stored CUBIN read and loaded, a verification
// with a device synchronization) plus about kLaunchesPerCandidate launches over the whole halving.
// At least kFewestSelected (a poor estimate must not leave a single guess), at most
// kMostSelected.
inline constexpr double kCandidateOverheadMs = 5.0;
inline constexpr int kLaunchesPerCandidate = 8;
inline constexpr int kFewestSelected = 4;
inline constexpr int kMostSelected = 400;
// The screening times each candidate for about this long (3 to 20 launches after the probe), so
// that kernels of a few microseconds, whose single launches are noisy, are compared on more.
inline constexpr double kScreeningTargetMs = 0.5;
// The screening's plan: a warm-up, a probe of 3 and 3 to 20 launches for kScreeningTargetMs,
// within the bench's own plan `full`. Provider candidates are screened with it too.
TimingPlan screening_plan(const TimingPlan& full);
int candidates_within_budget(double budget_ms, double launch_ms);
// Once the budget is spent nothing more is compiled, but the candidates of the chunk compiled last
// (on a first tuning NVRTC takes seconds a chunk and can run the budget out by itself) are still
// screened for this share of the budget past the deadline or past the end of that compilation,
// whichever is later: their compilation is paid for, and a look costs a verification and a few
// launches. Otherwise a first tuning can keep a slower kernel than one it has already compiled.
inline constexpr double kScreenCompiledPastBudget = 0.10;

// The final round times its two candidates in up to kFinalPasses passes that alternate their order
// (A B, B A, A B, B A), each with its share of the bench's full plan, and ranks each by the median
// of its passes' medians. Timed one after the other, the first runs while the GPU is cooler: under
// a power limit the clock falls within tens of milliseconds of sustained load, so the first of
// two kernels can look faster than the second where the second is faster from a cool start
// (docs/tuning.md, "Power and the order of timings"). A bench plan of fewer than
// 2 kFinalPasses samples (TILEMM_TUNE_EFFORT=quick) gives one pass. Where the time left cannot pay
// for the final round even at its least (a warm-up, a probe and a sample per pass), it still runs
// if that least costs at most kFinalRoundPastBudget of the budget: it is what decides. A problem
// timed on the same buffers gives its final round half the time left: the rotated look at the
// finalists (rotated_finalists.hpp) follows it, with the other half.
inline constexpr int kFinalPasses = 4;
inline constexpr double kFinalRoundPastBudget = 0.05;

// The best-ranked candidate (by name) of each family none of whose candidates `ranked` predicts
// from a measurement: select_within_budget always selects them and screens them right after the
// highest winner and a reduced precision's own kernels, before the rest in ranking order.
std::set<std::string> leaders_of_unmeasured_families(const std::vector<RankedCandidate>& ranked);

// Compiles (or fetches: settings.compile) the candidates still in the running that have no
// binary yet, on `threads` host threads; a failure is recorded on its candidate (compile_error).
void compile_candidates(const std::vector<SearchCandidate*>& candidates, const std::string& arch,
                        const Compiler& compile, int threads);

// Among `candidates` still in the running (status ok), keeps the best-ranked few plus an
// exploration set (rank_candidates_by_history over settings.history, then budgeted_selection),
// and always the highest winner, a reduced precision's own kernels and the leaders of unmeasured
// families, and orders them for the screening (those, then ranking order); every other one is
// marked pruned with its rank and prediction as the reason. Nothing compiles.
void select_within_budget(std::vector<SearchCandidate>& candidates, const DeviceInfo& device,
                          const Problem& problem, const TuneSettings& settings);

// How the screening gets its candidates' CUBINs: a chunk at a time, or streamed.
struct ScreeningCompiles {
  // Chunks: compiles these candidates (compile_candidates), returning when all have ended.
  std::function<void(const std::vector<SearchCandidate*>&)> compile_chunk;
  // Streamed, where set: starts compiling a candidate off the tuning's threads
  // (TuneSettings::start_compile)...
  std::function<detail::BackgroundCompile(const SearchCandidate&)> start;
  // ...and, once that has ended, records its CUBIN or its compile error (TuneSettings::compile,
  // which then has the CUBIN at hand).
  std::function<void(SearchCandidate&)> finish;
  // The chunk's size, or how many candidates are handed over ahead of the screening.
  int at_a_time = 1;
};

struct ScreeningCompileStats {
  double waited_ms = 0.0;   // the screening's time spent waiting for compilations
  std::size_t handed = 0;   // candidates handed to the compilers
  // Selected candidates pruned unscreened because the budget ran out, and of those the ones
  // handed to the compilers whose compilation had not ended when the screening reached them ("...
  // ran out before it was compiled"): a tuning bound by its compilations. The others' reasons say
  // "... before it was timed" (its CUBIN at hand) or "... before the screening reached it".
  std::size_t unscreened = 0;
  std::size_t still_compiling = 0;
};

// Verifies and times the candidates still in the running by successive halving: a screening round
// (best-ranked first, each verified, then timed with a warm-up and a short probe; where the
// fastest so far is a look at an unmeasured family, SearchCandidate::explores_family, that
// family's other candidates move to the front of what is not yet handed to the compilers), then
// rounds that time the better half again with twice the launches while more than two remain, and
// a final round of the best two with the bench's full plan in alternating passes (kFinalPasses).
// A round that the time left before `deadline_ms` (on settings' clock) cannot pay for is
// shortened; an intermediate round that not even three launches each fit is not run, and the best
// two go to the final round, which runs past the deadline only as kFinalRoundPastBudget allows;
// where it does not run, the last round completed decides. Candidates dropped are marked pruned
// with their times as the reason; the last round's keep status ok. At least kFewestSelected
// candidates are screened whatever the deadline, so a tuning always has a winner when one is
// correct.
//
// Compilation (`compiles`): in chunks, a chunk is compiled as the screening reaches it and started
// while the deadline has not passed, though it may overrun it (a first tuning that compiled fewer
// chunks missed the families that win short-K and skinny shapes). Streamed, the compilers stay
// `at_a_time` candidates ahead of the screening until the deadline, and a candidate still
// compiling at the deadline is not waited for (once kFewestSelected were screened): a first call
// costs its budget, and the compilation ends on the pool for a later tuning. Either way, a
// candidate whose CUBIN is at hand is still screened for kScreenCompiledPastBudget past the
// deadline. `while_first_compiles`, where set, runs on the calling thread while the first
// candidates compile on others (the providers' timings, which use the GPU and not the
// compilers' CPUs).
ScreeningCompileStats time_by_successive_halving(
    std::vector<SearchCandidate>& candidates, CandidateBench& bench, const TuneSettings& settings,
    double deadline_ms, const ScreeningCompiles& compiles,
    const std::function<void()>& while_first_compiles = nullptr);

}  // namespace tilemm::tuner
