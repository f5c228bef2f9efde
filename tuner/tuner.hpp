// The search: enumerate the space, reject what cannot run, (under a budget: apply the pruning
// rules and keep the best-ranked few), compile the rest in parallel, verify each once, time the
// correct ones, pick the lowest median.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "background_compiles.hpp"
#include "candidate_bench.hpp"
#include "candidate_provider.hpp"
#include "candidate_ranking.hpp"
#include "compiled_variants.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::tuner {

using Compiler = std::function<detail::CompiledVariant(const Variant&, const std::string& arch)>;

struct TuneOutcome {
  std::vector<CandidateResult> candidates;  // sorted: ok by median, then the rest by name
  std::string winner;
  double median_ms = 0.0;
  double margin = 0.0;
  detail::CompiledVariant winner_binary;
  double seconds = 0.0;
  // Under a budget (ScreeningCompileStats): selected candidates left unscreened when the budget
  // ran out, and those of them whose compilation had not ended, as on a machine whose cache holds
  // few CUBINs yet.
  std::size_t unscreened = 0;
  std::size_t still_compiling = 0;
};

struct TuneSettings {
  Compiler compile = detail::compile_variant_once;  // NVRTC once per variant and process
  int compile_threads = 0;       // 0: one per hardware thread
  // Under a budget, where set: starts compiling a candidate off the tuning's threads
  // (detail::compile_in_background), so that the compilers keep ahead of the screening and a
  // compilation still running at the deadline is not waited for; `compile` then has the CUBIN at
  // hand. What it starts must not refer to the caller's objects: it may end after the tuning.
  // Empty: the budgeted search compiles a chunk at a time on compile_threads threads.
  std::function<detail::BackgroundCompile(const Variant&, const std::string& arch)> start_compile;
  // Under a budget, stop timing a candidate whose warm-up exceeds this x the best so far
  // (pruning_rules.hpp); the exhaustive search times every candidate in full.
  double prune_factor = 3.0;
  // Empty: variant_space(problem.precision) and, below highest, variant_space(Precision::highest)
  // too: the FP32 kernels are more accurate, and the faster candidate wins.
  std::vector<Variant> space;
  std::function<void(int done, int total)> progress;  // after each compiled candidate is done
  // Candidates not to run at all, with the reason recorded for them (status launch_error).
  std::map<std::string, std::string> skip;
  // Before a candidate touches the GPU, and after its launch or kernel failed.
  std::function<void(const std::string& variant)> on_candidate;
  std::function<void(const std::string& variant, const std::string& reason)> on_launch_failure;
  // The budgeted search (budgeted_search.hpp, docs/tuning.md): above 0, the pruning rules
  // (pruning_rules.hpp) apply, the candidates they leave are ranked by `history` (this device's
  // measured shapes of the problem's class) and only as many as this many milliseconds can pay for
  // are timed, by successive halving, compilation included. 0 (the default here;
  // Options::tune_budget_ms is the library's): the exhaustive search, which applies no pruning rule
  // and verifies and times in full every candidate that can run.
  double budget_ms = 0.0;
  std::vector<MeasuredShape> history;
  std::function<double()> now_ms;  // the budget's clock in milliseconds; empty: steady_clock
  // For a tuning below highest: the winner of the shape's highest (FP32) result, a variant's or
  // a row-split plan's name (the dispatcher looks it up; empty: none known). A variant is
  // admitted even outside `space` (skip and can_run still apply), exempt from the cheap pruning
  // rules and the budget's selection, and screened first; tune_with_plans tries a plan whatever the
  // budget says. Either is then timed on the same bench like any candidate, so the tuning ends
  // with the faster of it and the search's winner: asking for less precision does not end slower
  // than the FP32 result known for the shape (docs/tuning.md, "Precision modes").
  std::string highest_winner;
  // The providers whose candidates (candidate_provider.hpp) join the search, on a bench that
  // runs_prepared(): unset, detail::candidate_providers(problem) (cuBLASLt where it loads, unless
  // !problem.vendor). They are verified and timed in full after the variants, with the bench's
  // plan and (under a budget) the same warm-up give-up, whatever the budget: a provider lists a
  // few (cuBLASLt's heuristic, 8 per compute type) and compiles nothing.
  std::optional<std::vector<detail::CandidateProvider*>> providers;
};

// Tunes `problem` on `device` with `bench`. Every candidate ends with a status; compile and
// launch failures are recorded, never thrown. With the default space, a problem of precision
// high or medium times its own kernels and the FP32 (highest) ones together, so an FP32 kernel
// serves it where none of its own can run, meets the bound or is faster. Throws tilemm::Error
// only when no candidate passed (the statuses are in the message).
TuneOutcome tune(const DeviceInfo& device, const Problem& problem, CandidateBench& bench,
                 const TuneSettings& settings = {});

// Verifies and times one candidate (a compiled variant, or a row-split plan) by the tuning's
// rules: settings.on_candidate first; a failed check is recorded with its status (and reported to
// settings.on_launch_failure when the launch failed); under a budget, a probe over prune_factor x
// `best_ms` is recorded as pruned (give_up_ms, pruning_rules.hpp); otherwise its timing is recorded and `best_ms` lowered. Exceptions are
// recorded as launch errors, never thrown.
void measure_candidate(CandidateResult& result, const TuneSettings& settings, double& best_ms,
                       const std::function<CheckResult()>& verify,
                       const std::function<TimingResult(double give_up_ms)>& time);

// A candidate named in settings.skip (it failed in an earlier tuning worker): records it as a
// launch error with that failure as its reason and returns true; false for any other candidate.
bool record_skip(CandidateResult& result, const TuneSettings& settings);

// Records a candidate that threw as a launch error: the first line of `what` is its reason, and
// settings.on_launch_failure hears of it.
void record_launch_error(CandidateResult& result, const TuneSettings& settings,
                         const std::string& what);

// Sorts `candidates` (ok by ascending median, ties by name; then every failure by name) and
// returns the margin of the first over the second ok candidate: runner-up median / winner
// median - 1, 0 when there is no runner-up. Throws tilemm::Error when none is ok.
double rank_candidates(std::vector<CandidateResult>& candidates);

}  // namespace tilemm::tuner
