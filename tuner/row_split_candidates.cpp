#include "row_split_candidates.hpp"

#include <chrono>

#include "row_split.hpp"
#include "tilemm/error.hpp"

namespace tilemm::tuner {
namespace {

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
  tuned.push_back({part, tune(device, part, *bench, settings)});
  return tuned.back().outcome.winner;
}

}  // namespace

ShapeTuning tune_with_plans(const DeviceInfo& device, const Problem& problem, CandidateBench& bench,
                            const TuneSettings& settings, const PlanSettings& plans) {
  ShapeTuning out;
  out.outcome = tune(device, problem, bench, settings);
  const std::vector<std::int64_t> heights = detail::row_split_heights(problem);
  if (heights.empty()) return out;
  const auto start = std::chrono::steady_clock::now();
  double best = out.outcome.median_ms;
  for (const std::int64_t rows : heights) {
    CandidateResult c;
    c.variant = detail::row_split_name(rows);
    if (record_skip(c, settings)) {
      out.outcome.candidates.push_back(std::move(c));
      continue;
    }
    try {
      const std::string core = part_winner(device, problem, rows, settings, plans, out.parts);
      const std::string rest = part_winner(device, problem, problem.M - rows, settings, plans, out.parts);
      const std::string parts = "rows 0-" + std::to_string(rows - 1) + ": " + core + "; rows " +
                                std::to_string(rows) + "-" + std::to_string(problem.M - 1) + ": " +
                                rest;
      if (detail::parse_row_split(core) || detail::parse_row_split(rest)) {
        c.status = CandidateStatus::cannot_run;
        c.reason = "a part's winner is itself a row-split plan (" + parts + ")";
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
