#include "row_split_candidates.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "candidate_provider.hpp"
#include "family_registry.hpp"
#include "row_split.hpp"
#include "tilemm/error.hpp"

namespace tilemm::tuner {
namespace {

// A plan wins back the SM time the single kernel's last wave leaves idle (docs/tuning.md); under a
// tenth idle, tuning two more shapes cannot pay within a budget.
constexpr double kPlanWorthIdleShare = 0.10;
// Plans are tried only with at least this share of the budget left for the parts' tunings.
constexpr double kPlanBudgetShare = 0.25;

// The winner of the part of `problem` that has `rows` rows: known, tuned earlier in this call,
// or tuned now (and kept in `tuned`).
std::string part_winner(const DeviceInfo& device, const Problem& problem, std::int64_t rows,
                        const TuneSettings& settings, const PlanSettings& plans,
                        std::vector<TunedPart>& tuned) {
  if (const auto known = plans.known_winners.find(rows); known != plans.known_winners.end())
    return known->second;
  for (const auto& part : tuned)
    if (part.problem.M == rows) return part.outcome.winner;
  const Problem part = detail::rows_of(problem, rows);
  if (!plans.bench_for) throw Error(ErrorKind::internal, "tilemm: no bench for a row-split part");
  const std::unique_ptr<CandidateBench> bench = plans.bench_for(part);
  TuneSettings part_settings = settings;  // the part's own FP32 winner, not the shape's
  const auto highest = plans.highest_part_winners.find(rows);
  part_settings.highest_winner =
      highest == plans.highest_part_winners.end() ? std::string() : highest->second;
  tuned.push_back({part, tune(device, part, *bench, part_settings)});
  return tuned.back().outcome.winner;
}

// The share of the SM time that the variant's last wave leaves idle on the problem: (waves x SMs
// - blocks) / (waves x SMs), none for persistent blocks that fill the SMs. What a row-split plan
// can win back at most.
double idle_in_last_wave(const Variant& v, const Problem& problem, int sm_count) {
  const std::uint64_t blocks = detail::launched_blocks(v, problem, sm_count);
  return blocks == 0 ? 0.0 : 1.0 - detail::wave_fill(blocks, std::max(1, sm_count));
}

// Under a budget, plans are tried only where the winner's last wave leaves enough of the SMs idle
// to pay for tuning the parts, and only with enough of the budget left to tune them. Returns why
// not, or "" to try them; `part_budget_ms` is what each part's tuning may spend.
std::string why_no_plans_within_budget(const DeviceInfo& device, const Problem& problem,
                                       const TuneOutcome& outcome, const TuneSettings& settings,
                                       const PlanSettings& plans,
                                       const std::vector<std::int64_t>& heights,
                                       double& part_budget_ms) {
  if (detail::provider_of(outcome.winner))
    return "not tried within the tuning budget: the winner is a provider's candidate";
  const double idle = idle_in_last_wave(parse_variant(outcome.winner), problem, device.sm_count);
  if (idle < kPlanWorthIdleShare) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "not tried within the tuning budget: the winner's last wave leaves %.0f%% of the "
                  "SM time idle, under the %.0f%% a plan needs to pay for its parts' tunings",
                  100 * idle, 100 * kPlanWorthIdleShare);
    return text;
  }
  const double left_ms = settings.budget_ms - 1000.0 * outcome.seconds;
  if (left_ms < kPlanBudgetShare * settings.budget_ms)
    return "not tried: the tuning budget was spent on the shape's own candidates";
  int parts = 0;
  for (const std::int64_t rows : heights)
    for (const std::int64_t part : {rows, problem.M - rows})
      if (!plans.known_winners.count(part)) ++parts;
  part_budget_ms = left_ms / std::max(parts + 1, 1);  // + 1: the plans' own timings
  return "";
}

}  // namespace

ShapeTuning tune_with_plans(const DeviceInfo& device, const Problem& problem, CandidateBench& bench,
                            const TuneSettings& settings, const PlanSettings& plans) {
  ShapeTuning out;
  out.outcome = tune(device, problem, bench, settings);
  std::vector<std::int64_t> heights = detail::row_split_heights(problem);
  // The FP32 result's plan (TuneSettings::highest_winner) is tried whatever the budget says.
  const std::optional<std::int64_t> highest_plan = detail::parse_row_split(settings.highest_winner);
  if (highest_plan && detail::row_split_fits(*highest_plan, problem) &&
      std::find(heights.begin(), heights.end(), *highest_plan) == heights.end())
    heights.push_back(*highest_plan);
  if (heights.empty()) return out;
  const auto start = std::chrono::steady_clock::now();
  TuneSettings part_settings = settings;
  std::string why_not;
  if (settings.budget_ms > 0 && !detail::parse_row_split(out.outcome.winner))
    why_not = why_no_plans_within_budget(device, problem, out.outcome, settings, plans, heights,
                                         part_settings.budget_ms);
  // Where the budget would try no plan, the FP32 result's plan still has its parts tuned (each
  // part's FP32 winner screened first), within the share of the budget plans are given.
  TuneSettings highest_plan_settings = part_settings;
  if (!why_not.empty())
    highest_plan_settings.budget_ms = kPlanBudgetShare * settings.budget_ms / 3;  // 2 parts, 1 plan
  double best = out.outcome.median_ms;
  for (const std::int64_t rows : heights) {
    CandidateResult c;
    c.variant = detail::row_split_name(rows);
    const bool is_highest_plan = highest_plan && rows == *highest_plan;
    if (!why_not.empty() && !is_highest_plan) {
      c.status = CandidateStatus::pruned;
      c.reason = why_not;
      out.outcome.candidates.push_back(std::move(c));
      continue;
    }
    if (record_skip(c, settings)) {
      out.outcome.candidates.push_back(std::move(c));
      continue;
    }
    try {
      const TuneSettings& parts_settings = is_highest_plan ? highest_plan_settings : part_settings;
      const std::string core = part_winner(device, problem, rows, parts_settings, plans, out.parts);
      const std::string rest =
          part_winner(device, problem, problem.M - rows, parts_settings, plans, out.parts);
      const std::string parts = "rows 0-" + std::to_string(rows - 1) + ": " + core + "; rows " +
                                std::to_string(rows) + "-" + std::to_string(problem.M - 1) + ": " +
                                rest;
      if (detail::parse_row_split(core) || detail::parse_row_split(rest) ||
          detail::provider_of(core) || detail::provider_of(rest)) {
        c.status = CandidateStatus::cannot_run;
        c.reason = std::string("a part's winner is itself a ") +
                   (detail::parse_row_split(core) || detail::parse_row_split(rest)
                        ? "row-split plan"
                        : "provider's candidate, not a variant") +
                   " (" + parts + ")";
        out.outcome.candidates.push_back(std::move(c));
        continue;
      }
      const RowSplitPlan plan{rows, parse_variant(core), parse_variant(rest)};
      measure_candidate(
          c, settings, best, [&] { return bench.verify_plan(plan); },
          [&](double give_up_ms) { return bench.time_plan(plan, give_up_ms); });
      // The parts' winners: the whole reason when it is ok, appended to any other.
      c.reason = c.reason.empty() ? parts : c.reason + " (" + parts + ")";
    } catch (const std::exception& e) {  // tuning a part, or its bench, failed
      record_launch_error(c, settings, e.what());
    }
    out.outcome.candidates.push_back(std::move(c));
  }
  out.outcome.margin = rank_candidates(out.outcome.candidates);
  out.outcome.winner = out.outcome.candidates.front().variant;
  out.outcome.median_ms = out.outcome.candidates.front().stats.median_ms;
  out.outcome.seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tilemm::tuner
