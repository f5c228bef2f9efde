// What the tuner needs from a GPU, behind an interface: run a compiled candidate once and check
// its result, and time it. The selection logic is tested on the CPU with a fake bench.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>

#include "nvrtc_compiler.hpp"
#include "tilemm/autotune.hpp"
#include "timing_method.hpp"

namespace tilemm::tuner {

struct CheckResult {
  CandidateStatus status = CandidateStatus::ok;  // ok, wrong_result or launch_error
  std::string reason;
};

// How many launches time one candidate: `warmup` discarded, `probe` to estimate its time, then
// enough for `target_ms` of timing, clamped to [min_samples, max_samples]. With max_samples 0 the
// probe's launches are the whole measurement (a budgeted search's first, screening round).
struct TimingPlan {
  int warmup = 3;
  int probe = 5;
  int min_samples = 15;
  int max_samples = 400;
  double target_ms = 30.0;
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
  // The plan time() follows (the standard one, or the quick one under TILEMM_TUNE_EFFORT=quick).
  virtual TimingPlan timing_plan() const = 0;
  // time() with another plan: the budgeted search's shorter rounds (tuner/budgeted_search.hpp).
  virtual TimingResult time_with(const Variant& v, const TimingPlan& plan, double give_up_ms) = 0;
  // The same for a row-split plan whose parts' variants were tuned (or are known) already:
  // verify_plan checks its whole result, time_plan times both launches together.
  virtual CheckResult verify_plan(const RowSplitPlan& plan) = 0;
  virtual TimingResult time_plan(const RowSplitPlan& plan, double give_up_ms) = 0;

  // A provider's candidate (candidate_provider.hpp), named `name`, which `launch` enqueues on the
  // bench's arguments: verified and timed like a variant, with the same inputs, bound and plan.
  // Only a bench that runs_prepared() is given them; the others' (the CPU tests' fakes of
  // variants alone) answer a launch error.
  using Launcher = std::function<void(const GemmArgs& args, cudaStream_t stream)>;
  virtual bool runs_prepared() const { return false; }
  virtual CheckResult verify_prepared(const std::string& name, const Launcher& launch);
  // Timed with `plan`: the bench's own (timing_plan()) in a full timing, the budgeted search's
  // screening plan in its first round.
  virtual TimingResult time_prepared(const std::string& name, const Launcher& launch,
                                     const TimingPlan& plan, double give_up_ms);

  // The inputs that the timings above feed the launches (timing_method.hpp: the problem's
  // input_mode on the bench's device). The default, rotated, is the fakes' that script one time
  // per candidate: a search then takes no second look at its finalists.
  virtual InputMode input_mode() const { return InputMode::rotated; }
  // time_with() and time_prepared() with inputs in `mode`, whatever input_mode() is: a problem
  // timed on the same buffers has its finalists timed on rotated copies too (docs/tuning.md, "The
  // rotated look at the finalists"). The default times in input_mode() only, and throws
  // tilemm::Error (internal) for the other mode.
  virtual TimingResult time_in_mode(const Variant& v, const TimingPlan& plan, double give_up_ms,
                                    InputMode mode);
  virtual TimingResult time_prepared_in_mode(const std::string& name, const Launcher& launch,
                                             const TimingPlan& plan, double give_up_ms,
                                             InputMode mode);
};

}  // namespace tilemm::tuner
