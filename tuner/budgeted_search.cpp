#include "budgeted_search.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "candidate_ranking.hpp"
#include "timing_passes.hpp"

namespace tilemm::tuner {
namespace {

// With nothing measured near the problem, the launch time is guessed from its FLOPs at a rough half
// of an FP32 SM's peak: it only sizes the selection, and the screening round corrects it.
constexpr double kGuessFlopsPerSmPerMs = 2.5e8;

std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", ms);
  return text;
}

double estimated_launch_ms(const std::vector<RankedCandidate>& ranked, const DeviceInfo& device,
                           const Problem& p) {
  if (!ranked.empty() && std::isfinite(ranked.front().predicted_ms)) return ranked.front().predicted_ms;
  const double flops = 2.0 * double(p.M) * double(p.N) * double(p.K);
  return flops / (kGuessFlopsPerSmPerMs * std::max(1, device.sm_count));
}

// A round's plan, never longer than the bench's own (so TILEMM_TUNE_EFFORT=quick stays quick).
TimingPlan capped(TimingPlan plan, const TimingPlan& most) {
  plan.warmup = std::min(plan.warmup, most.warmup);
  plan.probe = std::max(1, std::min(plan.probe, most.probe));
  plan.max_samples = std::min(plan.max_samples, most.max_samples);
  plan.min_samples = std::min(plan.min_samples, plan.max_samples);
  plan.target_ms = std::min(plan.target_ms, most.target_ms);
  return plan;
}

std::vector<SearchCandidate*> in_the_running(std::vector<SearchCandidate>& candidates) {
  std::vector<SearchCandidate*> out;
  for (auto& c : candidates)
    if (c.result.status == CandidateStatus::ok) out.push_back(&c);
  return out;
}

void sort_by_median(std::vector<SearchCandidate*>& running) {
  std::stable_sort(running.begin(), running.end(), [](const SearchCandidate* a, const SearchCandidate* b) {
    return a->result.stats.median_ms < b->result.stats.median_ms;
  });
}

// A round: the candidates in `running` timed with `plan` shared out over `passes` passes (the final
// round's kFinalPasses, else 1), the order reversed every other pass. A candidate whose launch
// fails leaves the running with the failure and keeps its earlier times; the others keep the
// median of their passes (with one pass, that pass's stats).
void time_round(const std::vector<SearchCandidate*>& running, CandidateBench& bench,
                const TuneSettings& settings, const TimingPlan& plan, int passes) {
  const TimingPlan pass = pass_plan(plan, passes);
  std::vector<std::vector<TimingStats>> stats(running.size());
  for (int p = 0; p < passes; ++p)
    for (std::size_t j = 0; j < running.size(); ++j) {
      const std::size_t i = p % 2 == 0 ? j : running.size() - 1 - j;
      SearchCandidate& c = *running[i];
      if (c.result.status != CandidateStatus::ok) continue;
      CandidateResult timed = c.result;
      double unused = std::numeric_limits<double>::infinity();
      measure_candidate(
          timed, settings, unused, [] { return CheckResult{}; },
          [&](double give_up_ms) { return bench.time_with(c.variant, pass, give_up_ms); });
      if (timed.status != CandidateStatus::ok) {
        c.result.status = timed.status;
        c.result.reason = timed.reason;
        continue;
      }
      stats[i].push_back(timed.stats);
    }
  for (std::size_t i = 0; i < running.size(); ++i)
    if (running[i]->result.status == CandidateStatus::ok && !stats[i].empty())
      running[i]->result.stats = over_passes(stats[i]);
}

}  // namespace

std::set<std::string> leaders_of_unmeasured_families(const std::vector<RankedCandidate>& ranked) {
  std::set<std::string> measured, seen, leaders;
  for (const auto& r : ranked)
    if (r.basis > 0) measured.insert(r.variant.family);
  for (const auto& r : ranked)  // in ranking order: the first of a family is its best-ranked
    if (!measured.count(r.variant.family) && seen.insert(r.variant.family).second)
      leaders.insert(variant_name(r.variant));
  return leaders;
}

TimingPlan screening_plan(const TimingPlan& full) {
  TimingPlan screen;
  screen.warmup = 1;
  screen.probe = 3;
  screen.min_samples = 3;
  screen.max_samples = 20;
  screen.target_ms = kScreeningTargetMs;
  return capped(screen, full);
}

int candidates_within_budget(double budget_ms, double launch_ms) {
  const double n =
      budget_ms / (kCandidateOverheadMs + kLaunchesPerCandidate * std::max(launch_ms, 1e-3));
  if (!(n < kMostSelected)) return kMostSelected;
  return std::max(kFewestSelected, static_cast<int>(n));
}

void select_within_budget(std::vector<SearchCandidate>& candidates, const DeviceInfo& device,
                          const Problem& problem, const TuneSettings& settings) {
  std::vector<Variant> space;
  for (const auto& c : candidates)
    if (c.result.status == CandidateStatus::ok) space.push_back(c.variant);
  const auto ranked = rank_candidates_by_history(space, problem, device.sm_count, settings.history);
  const int n = candidates_within_budget(settings.budget_ms, estimated_launch_ms(ranked, device, problem));
  const int best = (2 * n + 2) / 3;  // two thirds by prediction, one third exploring other grids
  std::map<std::string, std::size_t> rank_of;
  for (std::size_t i = 0; i < ranked.size(); ++i) rank_of[variant_name(ranked[i].variant)] = i;
  std::map<std::string, bool> chosen;
  for (const auto& r : budgeted_selection(ranked, best, n - best)) chosen[variant_name(r.variant)] = true;
  // A reduced precision's own kernels (a few tens at most) are always selected and screened
  // first: the FP32 kernels beside them are the more accurate alternative, and neither a history
  // of FP32 timings nor a budget spent on them may crowd out what the caller asked for.
  std::set<std::string> own;
  if (problem.precision != Precision::highest)
    for (const auto& v : space)
      if (precision_of(v) == problem.precision) own.insert(variant_name(v));
  for (const auto& name : own) chosen[name] = true;
  // Before them, the shape's FP32 winner (TuneSettings::highest_winner): always screened, so that
  // the tuning cannot end slower than it.
  const std::string& highest = settings.highest_winner;
  if (!highest.empty()) chosen[highest] = true;
  // After them, the best-ranked candidate of each family that nothing near has measured: the
  // ranking puts such a family last however well it suits the problem (the GEMV kernels on the
  // first skinny shape a device meets), so in ranking order a budget spent compiling the measured
  // families never reached it. One look each; the ranking decides the rest.
  const std::set<std::string> unmeasured_leaders = leaders_of_unmeasured_families(ranked);
  for (const auto& name : unmeasured_leaders) chosen[name] = true;
  for (auto& c : candidates) c.explores_family = unmeasured_leaders.count(c.result.variant) > 0;
  // Then in ranking order: if the budget runs out, the best-ranked were timed.
  std::stable_sort(candidates.begin(), candidates.end(), [&](const SearchCandidate& a, const SearchCandidate& b) {
    const bool highest_a = !highest.empty() && a.result.variant == highest;
    const bool highest_b = !highest.empty() && b.result.variant == highest;
    if (highest_a != highest_b) return highest_a;
    const bool own_a = own.count(a.result.variant) > 0, own_b = own.count(b.result.variant) > 0;
    if (own_a != own_b) return own_a;
    if (a.explores_family != b.explores_family) return a.explores_family;
    const auto ra = rank_of.find(a.result.variant), rb = rank_of.find(b.result.variant);
    const std::size_t ia = ra == rank_of.end() ? ranked.size() : ra->second;
    const std::size_t ib = rb == rank_of.end() ? ranked.size() : rb->second;
    return ia < ib;
  });
  for (auto& c : candidates) {
    if (c.result.status != CandidateStatus::ok || chosen.count(c.result.variant)) continue;
    const RankedCandidate& r = ranked[rank_of.at(c.result.variant)];
    c.result.status = CandidateStatus::pruned;
    c.result.reason = "not selected by the budgeted search: ranked " +
                      std::to_string(rank_of.at(c.result.variant) + 1) + " of " +
                      std::to_string(ranked.size()) +
                      (std::isfinite(r.predicted_ms) ? ", predicted " + ms_text(r.predicted_ms)
                                                     : ", nothing measured near");
  }
}

ScreeningCompileStats time_by_successive_halving(
    std::vector<SearchCandidate>& candidates, CandidateBench& bench, const TuneSettings& settings,
    double deadline_ms, const ScreeningCompiles& compiles,
    const std::function<void()>& while_first_compiles) {
  const TimingPlan full = bench.timing_plan();
  const auto now = settings.now_ms;
  ScreeningCompileStats stats;

  // Screening: verify each, then a warm-up, a short probe and a few repetitions.
  const TimingPlan screen = screening_plan(full);
  double best = std::numeric_limits<double>::infinity();
  int screened = 0;
  const int selected = static_cast<int>(in_the_running(candidates).size());
  if (settings.progress) settings.progress(0, selected);
  auto selection = in_the_running(candidates);  // in ranking order
  const bool streaming = static_cast<bool>(compiles.start);
  const std::size_t ahead = static_cast<std::size_t>(std::max(compiles.at_a_time, kFewestSelected));
  // selection[0, handed) went to the compilers; in streaming mode each has its compilation here.
  std::size_t handed = 0;
  std::map<const SearchCandidate*, detail::BackgroundCompile> started;
  bool overlapped = false;  // while_first_compiles has run
  const auto hand_over = [&](std::size_t end) {
    end = std::min(end, selection.size());
    if (end <= handed) return;
    const std::vector<SearchCandidate*> next(selection.begin() + static_cast<std::ptrdiff_t>(handed),
                                             selection.begin() + static_cast<std::ptrdiff_t>(end));
    handed = end;
    stats.handed += next.size();
    if (streaming) {
      for (SearchCandidate* s : next)
        if (s->result.status == CandidateStatus::ok && !s->binary) started.emplace(s, compiles.start(*s));
      if (!overlapped && while_first_compiles) {
        overlapped = true;
        while_first_compiles();  // on this thread while the compilers run on theirs
      }
      return;
    }
    const double before = now();
    if (!overlapped && while_first_compiles) {
      overlapped = true;
      // The compilers run on their own threads; what the caller overlaps runs here. The
      // future's destructor waits for them if the caller's work throws.
      std::future<void> compiled = std::async(std::launch::async, [&] { compiles.compile_chunk(next); });
      while_first_compiles();
      compiled.get();
    } else {
      compiles.compile_chunk(next);
    }
    stats.waited_ms += now() - before;
  };
  // Streaming: waits for c's compilation, until the deadline only once kFewestSelected were
  // screened, and takes its CUBIN (or its compile error) where it ended.
  const auto collect = [&](SearchCandidate& c) {
    const auto it = started.find(&c);
    if (it == started.end() || c.binary || c.result.status != CandidateStatus::ok) return;
    const double before = now();
    bool ended = true;
    if (screened < kFewestSelected) {
      it->second.ended.wait();
    } else {
      const double left_ms = std::max(0.0, deadline_ms - before);
      ended = it->second.ended.wait_for(std::chrono::duration<double, std::milli>(left_ms)) ==
              std::future_status::ready;
    }
    stats.waited_ms += now() - before;
    if (ended) compiles.finish(c);
  };
  // Where the fastest so far is a look at a family nothing near has measured, the ranking knew
  // nothing of that family's other candidates either (they come last): they go next, among
  // those not handed to the compilers yet, once per family.
  std::string leading_unmeasured_family;
  std::set<std::string> moved_forward;
  // When the chunk compiled last finished compiling, on settings' clock.
  double chunk_compiled_ms = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < selection.size(); ++i) {
    if ((streaming || i == handed) && !leading_unmeasured_family.empty() &&
        moved_forward.insert(leading_unmeasured_family).second)
      std::stable_partition(selection.begin() + static_cast<std::ptrdiff_t>(std::max(i, handed)),
                            selection.end(), [&](const SearchCandidate* s) {
                              return s->variant.family == leading_unmeasured_family;
                            });
    // A chunk, or the window ahead, is handed over while the deadline has not passed.
    if ((streaming || i == handed) && !(screened >= kFewestSelected && now() > deadline_ms)) {
      hand_over(i + ahead);
      if (!streaming) chunk_compiled_ms = now();
    }
    SearchCandidate& c = *selection[i];
    if (streaming) collect(c);
    if (c.result.status != CandidateStatus::ok) continue;  // a compile error
    // Past the deadline a candidate whose CUBIN is at hand (its chunk was compiled while there was
    // time, however long that took) is still screened, for kScreenCompiledPastBudget more.
    const double screening_ends = std::max(deadline_ms, chunk_compiled_ms) +
                                  kScreenCompiledPastBudget * settings.budget_ms;
    if (!c.binary || (screened >= kFewestSelected && now() > screening_ends)) {
      // Handed over without a CUBIN at hand: its compilation had not ended (a chunk's all have).
      const bool compiling = !c.binary && i < handed;
      c.result.status = CandidateStatus::pruned;
      c.result.reason = "the tuning budget of " + ms_text(settings.budget_ms) + " ran out before " +
                        (c.binary    ? "it was timed"
                         : compiling ? "it was compiled"
                                     : "the screening reached it");
      ++stats.unscreened;
      if (compiling) ++stats.still_compiling;
      continue;
    }
    ++screened;
    const double best_before = best;
    measure_candidate(
        c.result, settings, best, [&] { return bench.verify(c.variant, *c.binary); },
        [&](double give_up_ms) { return bench.time_with(c.variant, screen, give_up_ms); });
    if (best < best_before) leading_unmeasured_family = c.explores_family ? c.variant.family : "";
    if (settings.progress) settings.progress(screened, selected);
  }
  // What is still queued never starts; what is compiling ends on the pool, for a later tuning.
  for (auto& [candidate, compilation] : started) compilation.dropped->store(true);
  if (settings.progress && screened < selected) settings.progress(selected, selected);
  if (!overlapped && while_first_compiles) while_first_compiles();  // nothing compiled

  // Rounds: the better half again, with twice the launches, while more than two remain and the
  // time left pays for a round; then the final round of the best two.
  auto running = in_the_running(candidates);
  sort_by_median(running);
  const auto keep_best = [&](std::size_t keep, const std::string& when) {
    for (std::size_t i = keep; i < running.size(); ++i) {
      CandidateResult& r = running[i]->result;
      r.status = CandidateStatus::pruned;
      r.reason = "dropped " + when + " of the budgeted search: " + ms_text(r.stats.median_ms) +
                 " against " + ms_text(running.front()->result.stats.median_ms) + " for the best";
    }
    running.resize(std::min(keep, running.size()));
  };
  const auto drop_slower_half = [&](const std::string& when) {
    keep_best((running.size() + 1) / 2, when);
  };
  // What timing the running candidates with `plan` costs, and at least (3 samples each, in
  // `passes` passes of a warm-up, a probe and a sample at the least).
  const auto costs = [&](const TimingPlan& plan, int passes) {
    double cost = 0.0, least = 0.0;
    for (const auto* c : running) {
      const double t = std::max(c->result.stats.median_ms, 1e-3);
      const double samples =
          std::clamp(plan.target_ms / t, double(plan.min_samples), double(plan.max_samples));
      cost += t * (plan.warmup + plan.probe + samples);
      least += t * std::max((plan.warmup + plan.probe + 3.0), passes * 3.0);
    }
    return std::pair{cost, least};
  };
  if (running.size() > 2) drop_slower_half("after the screening");
  int round = 1;
  for (; running.size() > 2; ++round) {
    TimingPlan plan;
    plan.warmup = 1;
    plan.probe = 2;
    plan.min_samples = 3;
    plan.max_samples = full.max_samples;
    plan.target_ms = std::ldexp(2.0, round);
    plan = capped(plan, full);
    // Shortened to the time left; not run when even 3 launches each do not fit.
    const auto [cost, least] = costs(plan, 1);
    const double left = deadline_ms - now();
    if (left < least) break;
    if (cost > left) {
      plan.target_ms *= left / cost;
      plan.min_samples = std::min(plan.min_samples, 3);
    }
    time_round(running, bench, settings, plan, 1);
    running = in_the_running(candidates);
    sort_by_median(running);
    drop_slower_half("in round " + std::to_string(round));  // they keep this round's times
  }
  if (running.size() > 2)
    keep_best(2, "when the budget left no time for round " + std::to_string(round));
  if (running.empty()) return stats;

  // The final round: the full plan in alternating passes, shortened to the time left, and run past
  // the deadline (at its least) only where that costs little of the budget: it is what decides.
  TimingPlan plan;
  plan.warmup = 1;
  plan.probe = 2;
  plan.min_samples = full.min_samples;
  plan.max_samples = full.max_samples;
  plan.target_ms = full.target_ms;
  plan = capped(plan, full);
  const int passes = final_passes(full);
  const auto [cost, least] = costs(plan, passes);
  // A problem timed on the same buffers leaves half the time left to the rotated look at its
  // finalists (rotated_finalists.hpp), which follows.
  const double left =
      (deadline_ms - now()) * (bench.input_mode() == InputMode::same_buffers ? 0.5 : 1.0);
  if (left < least && least > kFinalRoundPastBudget * settings.budget_ms) return stats;
  if (cost > left) {
    plan.target_ms *= std::max(left, 0.0) / cost;
    plan.min_samples = std::min(plan.min_samples, 3);
  }
  time_round(running, bench, settings, plan, passes);
  return stats;
}

}  // namespace tilemm::tuner
