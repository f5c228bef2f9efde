#include "timing_passes.hpp"

#include <algorithm>

#include "budgeted_search.hpp"

namespace tilemm::tuner {

TimingStats over_passes(std::vector<TimingStats> passes) {
  std::sort(passes.begin(), passes.end(),
            [](const TimingStats& a, const TimingStats& b) { return a.median_ms < b.median_ms; });
  const std::size_t n = passes.size();
  TimingStats s;
  s.median_ms = n % 2 == 1 ? passes[n / 2].median_ms
                           : 0.5 * (passes[n / 2 - 1].median_ms + passes[n / 2].median_ms);
  s.min_ms = passes.front().min_ms;
  for (const auto& p : passes) {
    s.min_ms = std::min(s.min_ms, p.min_ms);
    s.spread = std::max(s.spread, p.spread);
    s.samples += p.samples;
  }
  return s;
}

int final_passes(const TimingPlan& bench_plan) {
  return bench_plan.min_samples >= 2 * kFinalPasses ? kFinalPasses : 1;
}

TimingPlan pass_plan(const TimingPlan& round_plan, int passes) {
  if (passes <= 1) return round_plan;
  TimingPlan pass;
  pass.warmup = std::min(round_plan.warmup, 1);
  pass.probe = std::max(1, (round_plan.probe + passes - 1) / passes);
  pass.min_samples = std::max(1, (round_plan.min_samples + passes - 1) / passes);
  pass.max_samples = std::max(pass.min_samples, round_plan.max_samples / passes);
  pass.target_ms = round_plan.target_ms / passes;
  return pass;
}

}  // namespace tilemm::tuner
