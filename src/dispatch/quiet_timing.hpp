// Timing samples that no caller's gemm() overlapped: how a background tuning keeps its
// measurements clean while the application keeps using the device (docs/tuning.md, background
// tuning). What it cannot see: work launched by anything other than tilemm::gemm() (cuBLAS, the
// application's own kernels, other processes) during a sample.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace tilemm::dispatch {

struct QuietRetry {
  int immediate = 3;  // samples retaken at once after a disturbed one, then the waits below
  std::chrono::microseconds first_wait{500};
  std::chrono::microseconds longest_wait{100'000};  // waits double up to this
};

// Takes samples on device `ordinal` for a background worker. Each sample: wait until no
// caller's launch is in progress (detail::quiet_launch_mark), `drain` (the real one waits for the
// device to finish everything queued so far, so the callers' kernels launched before the mark do
// not run during the sample), `take`, and keep the sample only if no caller launched since the
// mark. A disturbed sample is discarded and retaken, at once `immediate` times, then after
// waits that double; it is never kept. Between attempts `stop_requested` is asked, and true
// throws detail::TuningStopped. An application that keeps the device busy with gemm() all the
// time therefore stalls the sample until it pauses or the process stops.
class QuietSampler {
 public:
  QuietSampler(int ordinal, std::function<void()> drain, std::function<bool()> stop_requested,
               QuietRetry retry = {});

  // A sample as `take` returns it, taken while no caller launched. Cost: one drain of the
  // device per attempt, plus the waits.
  std::vector<float> operator()(const std::function<std::vector<float>()>& take);

  // Samples discarded because a caller launched during them, since construction.
  int discarded() const { return discarded_; }

 private:
  void wait_or_stop(int attempt);

  int ordinal_;
  std::function<void()> drain_;
  std::function<bool()> stop_requested_;
  QuietRetry retry_;
  int discarded_ = 0;
};

}  // namespace tilemm::dispatch
