#include "rotated_finalists.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <limits>
#include <set>

#include "budgeted_search.hpp"
#include "log.hpp"
#include "timing_passes.hpp"

namespace tilemm::tuner {
namespace {

bool faster(const Finalist* a, const Finalist* b) {
  if (a->result->stats.median_ms != b->result->stats.median_ms)
    return a->result->stats.median_ms < b->result->stats.median_ms;
  return a->result->variant < b->result->variant;
}

// What a finalist's times are measured against in each mode: the reference's medians (the call an
// application would otherwise make) where it was timed both ways, else the best median of each
// mode among the contenders (rotated: among those timed so).
struct Yardstick {
  double same_ms = std::numeric_limits<double>::infinity();
  double rotated_ms = std::numeric_limits<double>::infinity();
  std::string name = "the best";  // the reference's name, or "the best"
  bool fixed = false;             // the reference's: timing another contender does not move it
};

// How far a contender timed both ways is behind the yardstick in its worse mode: the larger of its
// two medians over the yardstick's.
double worse_ratio(const Finalist& f, const Yardstick& y) {
  return std::max(f.result->stats.median_ms / y.same_ms, f.rotated_ms / y.rotated_ms);
}

bool ok(const Finalist& f) { return f.result->status == CandidateStatus::ok; }

// Whether the look times `f` rotated: a contender still in the running, or the reference where no
// launch of it failed (the search may have dropped it).
bool timed_rotated(const Finalist& f) {
  return ok(f) || (f.reference && f.result->status == CandidateStatus::pruned);
}

std::string both_medians(const Finalist& f) {
  char text[120];
  std::snprintf(text, sizeof text, "%.4g ms on the same buffers, %.4g ms rotated",
                f.result->stats.median_ms, f.rotated_ms);
  return text;
}

// Times `timed` on rotated inputs with `plan` in `passes` passes, the order reversed every other
// pass; a finalist whose timing throws leaves the running as a launch error.
void time_rotated(const std::vector<Finalist*>& timed, const TuneSettings& settings,
                  const TimingPlan& plan, int passes) {
  const TimingPlan pass = pass_plan(plan, passes);
  std::vector<std::vector<TimingStats>> stats(timed.size());
  for (int p = 0; p < passes; ++p)
    for (std::size_t j = 0; j < timed.size(); ++j) {
      const std::size_t i = p % 2 == 0 ? j : timed.size() - 1 - j;
      Finalist& f = *timed[i];
      if (!timed_rotated(f)) continue;
      try {
        stats[i].push_back(f.time(pass, InputMode::rotated).stats);
      } catch (const std::exception& e) {
        record_launch_error(*f.result, settings, e.what());
      }
    }
  for (std::size_t i = 0; i < timed.size(); ++i)
    if (timed_rotated(*timed[i]) && !stats[i].empty())
      timed[i]->rotated_ms = over_passes(stats[i]).median_ms;
}

}  // namespace

std::vector<Finalist*> choose_finalists(std::vector<Finalist>& contenders) {
  std::vector<Finalist*> running;
  for (auto& c : contenders)
    if (ok(c)) running.push_back(&c);
  std::sort(running.begin(), running.end(), faster);
  const std::size_t best_two = std::min<std::size_t>(2, running.size());
  std::vector<Finalist*> chosen(running.begin(),
                                running.begin() + static_cast<std::ptrdiff_t>(best_two));
  std::set<std::string> kinds;
  for (const Finalist* f : chosen) kinds.insert(f->kind);
  for (Finalist* f : running)
    if (chosen.size() < kRotatedFinalists && kinds.insert(f->kind).second) chosen.push_back(f);
  std::sort(chosen.begin(), chosen.end(), faster);
  return chosen;
}

void look_at_rotated_inputs(std::vector<Finalist>& contenders, CandidateBench& bench,
                            const TuneSettings& settings, double deadline_ms) {
  if (bench.input_mode() != InputMode::same_buffers) return;
  std::vector<Finalist*> timed = choose_finalists(contenders);
  if (timed.size() < 2) return;  // nothing to choose between
  Finalist* reference = nullptr;
  for (auto& c : contenders)  // the reference provider's fastest candidate
    if (c.reference && (reference == nullptr || faster(&c, reference))) reference = &c;
  if (reference != nullptr && std::find(timed.begin(), timed.end(), reference) == timed.end())
    timed.push_back(reference);
  const TimingPlan full = bench.timing_plan();
  TimingPlan plan = full;
  plan.warmup = std::min(plan.warmup, 1);
  plan.probe = std::min(plan.probe, 2);
  const int passes = final_passes(full);
  const bool budgeted = settings.budget_ms > 0;
  if (budgeted) {
    // What the look costs (rotated launches estimated at their median on the same buffers), and
    // at least: a warm-up, a probe and a sample per pass, 3 samples each.
    double cost = 0.0, least = 0.0;
    for (const Finalist* f : timed) {
      const double t = std::max(f->result->stats.median_ms, 1e-3);
      const double samples =
          std::clamp(plan.target_ms / t, double(plan.min_samples), double(plan.max_samples));
      cost += t * (plan.warmup + plan.probe + samples);
      least += t * std::max(plan.warmup + plan.probe + 3.0, passes * 3.0);
    }
    const double left = deadline_ms - settings.now_ms();
    if (left < least && least > kFinalRoundPastBudget * settings.budget_ms) {
      detail::log(detail::LogLevel::debug,
                  "the rotated look at the finalists is skipped: the budget has no time left");
      return;
    }
    if (cost > left) {
      plan.target_ms *= std::max(left, 0.0) / cost;
      plan.min_samples = std::min(plan.min_samples, 3);
    }
  }
  time_rotated(timed, settings, plan, passes);
  const auto yardstick = [&] {
    Yardstick y;
    if (reference != nullptr && reference->rotated_ms > 0) {
      y.same_ms = reference->result->stats.median_ms;
      y.rotated_ms = reference->rotated_ms;
      y.name = reference->result->variant;
      y.fixed = true;
      return y;
    }
    for (const Finalist& c : contenders) {
      if (!ok(c)) continue;
      y.same_ms = std::min(y.same_ms, c.result->stats.median_ms);
      if (c.rotated_ms >= 0) y.rotated_ms = std::min(y.rotated_ms, c.rotated_ms);
    }
    return y;
  };
  const auto least_worse_ratio = [&](const Yardstick& y) {
    const Finalist* least = nullptr;
    for (const Finalist& c : contenders)
      if (ok(c) && c.rotated_ms >= 0 &&
          (least == nullptr || worse_ratio(c, y) < worse_ratio(*least, y) ||
           (worse_ratio(c, y) == worse_ratio(*least, y) && faster(&c, least))))
        least = &c;
    return least;
  };
  if (!budgeted) {
    // The exhaustive search: every other contender, fastest on the same buffers first, that could
    // still win, or (against the best of each mode) move the best rotated median, a launch being
    // taken to be no faster on rotated inputs than on the same buffers; each is timed once.
    std::vector<Finalist*> rest;
    for (auto& c : contenders)
      if (ok(c) && c.rotated_ms < 0) rest.push_back(&c);
    std::sort(rest.begin(), rest.end(), faster);
    for (Finalist* c : rest) {
      const Yardstick y = yardstick();
      const Finalist* least = least_worse_ratio(y);
      if (least == nullptr) break;
      const double same = c->result->stats.median_ms;
      if (same / y.same_ms >= worse_ratio(*least, y) && (y.fixed || same >= y.rotated_ms)) break;
      time_rotated({c}, settings, full, 1);
    }
  }
  const Yardstick y = yardstick();
  const Finalist* winner = least_worse_ratio(y);
  if (winner == nullptr) return;
  std::string timed_text;
  for (auto& c : contenders) {
    if (c.rotated_ms >= 0 && timed_rotated(c))
      timed_text += "; " + c.result->variant + ": " + both_medians(c);
    if (&c == winner || !ok(c) || !faster(&c, winner)) continue;
    CandidateResult& r = *c.result;
    r.status = CandidateStatus::pruned;
    char text[320];
    std::snprintf(text, sizeof text,
                  "; %s, the winner, took %.4g ms and %.4g ms (at most %.3gx %s in either mode)",
                  winner->result->variant.c_str(), winner->result->stats.median_ms,
                  winner->rotated_ms, worse_ratio(*winner, y), y.name.c_str());
    if (c.rotated_ms >= 0) {
      char behind[160];
      std::snprintf(behind, sizeof behind, ", %.3gx %s rotated", c.rotated_ms / y.rotated_ms,
                    y.name.c_str());
      r.reason = "slower on rotated inputs (L2-cold): " + both_medians(c) + behind + text;
    } else {
      r.reason = std::string("not among the finalists timed on rotated inputs") + text;
    }
  }
  if (detail::log_enabled(detail::LogLevel::debug))
    detail::log(detail::LogLevel::debug, "rotated look at the finalists, against " + y.name +
                                             ": winner " + winner->result->variant + timed_text);
}

}  // namespace tilemm::tuner
