// The CandidateBench of the real GPU: inputs in the mode the problem's size implies (rotated
// through enough copies to exceed the L2, or the same buffers every launch: timing_method.hpp),
// results checked against the naive kernel's arithmetic with an error bound that grows with K,
// timings from CUDA events around each launch (the one timing loop: launch_timer.hpp). Inputs,
// reference and checks stay on the GPU (kernel_templates/support/verification.cu): only a few
// bytes per verification come back.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "candidate_bench.hpp"
#include "internal_stream.hpp"
#include "launch.hpp"
#include "launch_timer.hpp"
#include "timing_method.hpp"

namespace tilemm::tuner {

// The default plan, or with TILEMM_TUNE_EFFORT=quick (exactly; read once per process) the quick
// one: 1 warm-up, 2 probes, 3 samples. For CI and compute-sanitizer runs, where every launch is
// slow and which candidate wins does not matter: every candidate is still verified, only its
// time is noisier.
TimingPlan standard_timing_plan();
TimingPlan quick_timing_plan();
// The plan for a value of TILEMM_TUNE_EFFORT (nullptr: unset).
TimingPlan timing_plan_for(const char* effort);
TimingPlan timing_plan_from_environment();

class GpuBench : public CandidateBench {
 public:
  // Allocates the inputs for `problem` (input_set_count() sets: timing_method.hpp) on the current
  // device (which `device` describes) from tilemm's stream-ordered pool, fills them with random values and enqueues the reference on the
  // bench's own stream: nothing synchronizes (except with TILEMM_LOG=debug, which measures each
  // step), so the reference runs while the caller compiles candidates. The first bench of a
  // process on a device compiles the support kernels with NVRTC. Throws tilemm::Error on CUDA
  // failures, having freed what it allocated.
  // Timed launches follow `plan` (a context's effort: standard_timing_plan() or
  // quick_timing_plan()); without one, timing_plan_from_environment().
  GpuBench(const DeviceInfo& device, const Problem& problem, const TimingPlan& plan);
  GpuBench(const DeviceInfo& device, const Problem& problem)
      : GpuBench(device, problem, timing_plan_from_environment()) {}
  ~GpuBench() override;
  GpuBench(const GpuBench&) = delete;
  GpuBench& operator=(const GpuBench&) = delete;

  CheckResult verify(const Variant& v, const detail::CompiledVariant& compiled) override;
  TimingResult time(const Variant& v, double give_up_ms) override;
  TimingPlan timing_plan() const override { return plan_; }
  TimingResult time_with(const Variant& v, const TimingPlan& plan, double give_up_ms) override;
  // The input mode timed launches use (input_mode(problem, device.l2_bytes)) and how many sets
  // of inputs they rotate through (1 with same_buffers). Verification always uses set 0.
  InputMode input_mode() const override { return input_mode_; }
  std::size_t input_sets() const { return inputs_.sets.size(); }
  // Timings on rotated inputs where input_mode() is same_buffers: the first allocates
  // rotated_set_count() sets of their own (timing_method.hpp) and fills them with random values;
  // a tuning asks only for its few finalists. Asked for same_buffers where input_mode() is
  // rotated, they throw tilemm::Error (internal): no search needs that.
  TimingResult time_in_mode(const Variant& v, const TimingPlan& plan, double give_up_ms,
                            InputMode mode) override;
  TimingResult time_prepared_in_mode(const std::string&, const Launcher& launch,
                                     const TimingPlan& plan, double give_up_ms,
                                     InputMode mode) override {
    return time_launch(launch, plan, give_up_ms, mode);
  }
  // How many rotated sets were allocated for such timings (0 until the first).
  std::size_t rotated_sets() const { return rotated_.sets.size(); }

  // A part's kernel is the one loaded in this process (tuning the part loaded it), else it is
  // compiled with NVRTC (once per process).
  CheckResult verify_plan(const RowSplitPlan& plan) override;
  TimingResult time_plan(const RowSplitPlan& plan, double give_up_ms) override;

  // Providers' candidates run through verify_launch and time_launch.
  bool runs_prepared() const override { return true; }
  CheckResult verify_prepared(const std::string&, const Launcher& launch) override {
    return verify_launch(launch);
  }
  TimingResult time_prepared(const std::string&, const Launcher& launch, const TimingPlan& plan,
                             double give_up_ms) override {
    return time_launch(launch, plan, give_up_ms);
  }

  // What verify() and time() do for a variant, for any way of computing C = A * B on `stream`
  // from the bench's arguments (alpha 1, beta 0): a row-split plan's two launches, a provider's
  // candidate.
  CheckResult verify_launch(const Launcher& launch);
  TimingResult time_launch(const Launcher& launch, double give_up_ms);
  TimingResult time_launch(const Launcher& launch, const TimingPlan& plan, double give_up_ms);
  TimingResult time_launch(const Launcher& launch, const TimingPlan& plan, double give_up_ms,
                           InputMode mode);

  // How the probe and the timed samples are taken: the gate calls `take` (the launches, then
  // their times) until it returns a sample it keeps. Background tuning's gate keeps only samples
  // no caller's gemm() overlapped (src/dispatch/quiet_timing.hpp). Empty, the default: as they come.
  using SampleGate = std::function<std::vector<float>(const std::function<std::vector<float>()>& take)>;
  void set_sample_gate(SampleGate gate) { gate_ = std::move(gate); }

 private:
  // Device memory taken on the bench's stream, given back on it when the bench goes.
  using Buffer = std::unique_ptr<detail::StreamWorkspace>;
  // One set of a problem's A, B and C: views into an InputSets' buffers.
  struct Set {
    float* A = nullptr;
    float* B = nullptr;
    float* C = nullptr;
  };
  // `sets` side by side in one buffer per operand: one allocation and one random fill each,
  // however many sets there are (a small problem's rotated look needs tens of thousands).
  struct InputSets {
    Buffer A, B, C;
    std::vector<Set> sets;
  };
  Buffer allocate(std::size_t floats) const;
  InputSets allocate_sets(std::size_t count) const;
  void fill_inputs(InputSets& inputs, std::uint64_t seed);
  // The sets timed launches in `mode` rotate through: inputs_, or rotated_ (allocated and
  // filled on the first call).
  const std::vector<Set>& sets_for(InputMode mode);
  GemmArgs args_for(const Set& s) const;
  Launcher plan_launcher(const RowSplitPlan& plan);
  std::vector<float> sample(const Launcher& launch, const std::vector<Set>& sets, int launches,
                            int first_set);

  DeviceInfo device_;
  Problem problem_;
  TimingPlan plan_;
  InputMode input_mode_;
  // One of tilemm's own streams (internal_stream.hpp), before the buffers: they are freed on it,
  // so it must outlive them.
  detail::InternalStream stream_;
  InputSets inputs_;
  InputSets rotated_;  // for a same-buffers problem's finalists (sets_for)
  Buffer reference_;  // the naive arithmetic's C on set 0, M x N (leading dimension N)
  Buffer magnitude_;  // the same on |A| and |B|, which scales the error bound
  Buffer outside_;    // a detail::OutsideBound: the answer of each verification
  std::unique_ptr<LaunchTimer> timer_;  // the one timing loop (launch_timer.hpp)
  SampleGate gate_;
};

// Statistics of a sample of times (median, min, spread (p90 - p10) / median, count).
TimingStats summarize(std::vector<float> samples_ms);

}  // namespace tilemm::tuner
