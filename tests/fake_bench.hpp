// The tuner's fake GPU for the CPU tests: a bench scripted per candidate name and a compiler that
// compiles nothing, so that the search and selection run without a GPU.
#pragma once

#include <map>
#include <string>
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
    return timing_of(variant_name(v), give_up_ms);
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
    return timing_of(detail::row_split_name(plan.core_rows), give_up_ms);
  }

 private:
  tuner::TimingResult timing_of(const std::string& name, double give_up_ms) {
    timed.push_back(name);
    const double m = median.count(name) ? median.at(name) : 10.0;
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
