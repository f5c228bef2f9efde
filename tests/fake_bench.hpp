// The tuner's fake GPU for the CPU tests: a bench scripted per candidate name and a compiler that
// compiles nothing, so that the search and selection run without a GPU.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "candidate_bench.hpp"
#include "row_split.hpp"
#include "row_split_candidates.hpp"

namespace tilemm::testing {

// Scripted behaviour per variant name: a median time, or a wrong result, or a launch failure.
class FakeBench : public tuner::CandidateBench {
 public:
  std::map<std::string, double> median;
  std::map<std::string, tuner::CheckResult> check;
  std::vector<std::string> timed;

  tuner::CheckResult verify(const Variant& v, const detail::CompiledVariant&) override {
    const auto it = check.find(variant_name(v));
    return it == check.end() ? tuner::CheckResult{} : it->second;
  }
  tuner::TimingResult time(const Variant& v, double give_up_ms) override {
    return timing_of(variant_name(v), give_up_ms, mode);
  }
  // The bench's input mode (rotated: no second look at the finalists), and where it is
  // same_buffers a candidate's median on rotated inputs (unscripted: its `median`).
  tuner::InputMode mode = tuner::InputMode::rotated;
  std::map<std::string, double> rotated_median;
  tuner::InputMode input_mode() const override { return mode; }
  // Every timing, variant or provider candidate, with the mode its inputs were in.
  std::vector<std::pair<std::string, tuner::InputMode>> timed_modes;
  tuner::TimingPlan timing;  // what timing_plan() answers
  tuner::TimingPlan timing_plan() const override { return timing; }
  // Each time_with() is recorded with its plan, and advances `clock_ms` by the launches it ran
  // (the scripted median each): a budgeted search's clock (TuneSettings::now_ms) can read it.
  std::vector<std::pair<std::string, tuner::TimingPlan>> timed_with;
  double clock_ms = 0.0;
  // A GPU whose clock falls under sustained load: each time_with() call's times are this fraction
  // slower than the call before's (0: a steady GPU).
  double slowdown_per_call = 0.0;
  tuner::TimingResult time_with(const Variant& v, const tuner::TimingPlan& p,
                                double give_up_ms) override {
    return time_in_mode(v, p, give_up_ms, mode);
  }
  tuner::TimingResult time_in_mode(const Variant& v, const tuner::TimingPlan& p, double give_up_ms,
                                   tuner::InputMode in) override {
    const std::string name = variant_name(v);
    const double slowdown = 1.0 + slowdown_per_call * static_cast<double>(timed_with.size());
    timed_with.emplace_back(name, p);
    tuner::TimingResult r = timing_of(name, give_up_ms / slowdown, in);
    r.stats.median_ms *= slowdown;
    r.stats.min_ms *= slowdown;
    const int samples = p.max_samples == 0 ? p.probe : std::max(p.min_samples, 1);
    r.stats.samples = samples;
    clock_ms += r.stats.median_ms * (p.warmup + p.probe + (p.max_samples == 0 ? 0 : samples));
    return r;
  }
  // A plan is scripted under its name (rowsplit_h<h>); what it was asked to run is recorded.
  std::vector<std::string> plans;  // "rowsplit_h<h>: <core> + <rest>"
  tuner::CheckResult verify_plan(const tuner::RowSplitPlan& plan) override {
    const std::string name = detail::row_split_name(plan.core_rows);
    plans.push_back(name + ": " + variant_name(plan.core) + " + " + variant_name(plan.rest));
    const auto it = check.find(name);
    return it == check.end() ? tuner::CheckResult{} : it->second;
  }
  tuner::TimingResult time_plan(const tuner::RowSplitPlan& plan, double give_up_ms) override {
    return timing_of(detail::row_split_name(plan.core_rows), give_up_ms, mode);
  }

 protected:
  // The scripted timing of `name` on inputs in `in`, recorded in `timed` and `timed_modes`.
  tuner::TimingResult timing_of(const std::string& name, double give_up_ms, tuner::InputMode in) {
    timed.push_back(name);
    timed_modes.emplace_back(name, in);
    double m = median.count(name) ? median.at(name) : 10.0;
    if (in != mode && rotated_median.count(name)) m = rotated_median.at(name);
    tuner::TimingResult r;
    r.stats = {m, m * 0.9, 0.02, 30};
    r.pruned = m > give_up_ms;
    return r;
  }
};

inline detail::CompiledVariant fake_compile(const Variant& v, const std::string& arch) {
  detail::CompiledVariant c;
  c.name = variant_name(v);
  c.arch = arch;
  c.cubin = {'x'};
  return c;
}

}  // namespace tilemm::testing
