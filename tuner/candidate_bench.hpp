// What the tuner needs from a GPU, behind an interface: run a compiled candidate once and check
// its result, and time it. The selection logic is tested on the CPU with a fake bench.
#pragma once

#include <cstdint>
#include <string>

#include "nvrtc_compiler.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::tuner {

struct CheckResult {
  CandidateStatus status = CandidateStatus::ok;  // ok, wrong_result or launch_error
  std::string reason;
};

struct TimingResult {
  TimingStats stats;
  bool pruned = false;  // the warm-up alone was slower than the give-up time
};

// A row-split plan as the bench runs it (row_split.hpp): rows [0, core_rows) by `core`, the
// other rows by `rest`, back to back on one stream.
struct RowSplitPlan {
  std::int64_t core_rows = 0;
  Variant core;
  Variant rest;
};

class CandidateBench {
 public:
  virtual ~CandidateBench() = default;
  // Loads `compiled`, runs it on fresh random data and checks every element against the
  // reference.
  virtual CheckResult verify(const Variant& v, const detail::CompiledVariant& compiled) = 0;
  // Times a verified candidate: warm-up, then repetitions until the median is stable. Gives up
  // early (pruned) when the warm-up median exceeds `give_up_ms`.
  virtual TimingResult time(const Variant& v, double give_up_ms) = 0;
  // The same for a row-split plan whose parts' variants were tuned (or are known) already:
  // verify_plan checks its whole result, time_plan times both launches together.
  virtual CheckResult verify_plan(const RowSplitPlan& plan) = 0;
  virtual TimingResult time_plan(const RowSplitPlan& plan, double give_up_ms) = 0;
};

}  // namespace tilemm::tuner
