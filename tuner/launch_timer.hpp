// The one timing loop of tilemm: the tuner's GPU bench (gpu_bench.hpp) and every benchmark in
// tools/bench time their launches here, so that a tuned winner and a benchmarked one are
// measured the same way. Each launch sits between its own pair of CUDA events, and the launches
// are enqueued behind a StreamHold (src/core/stream_hold.hpp), so that they run back to back at
// the GPU's pace rather than the host's. A benchmark's second timing, of calls as an application
// makes them (time_calls), is here too.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "stream_hold.hpp"
#include "tilemm/device.hpp"

namespace tilemm::tuner {

class LaunchTimer {
 public:
  // For the current device, which `device` describes (cudaSetDevice done). Throws tilemm::Error
  // (cuda) when the hold's memory cannot be allocated.
  explicit LaunchTimer(const DeviceInfo& device);
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  // Calls `launch(i)` for i in [0, launches), which enqueues launch i on `stream`, each between
  // its own pair of events, held in batches of at most kLaunchesPerHold; then synchronizes
  // `stream` and returns each launch's milliseconds, in order. Creates events as more launches
  // are asked for than before. Throws tilemm::Error (cuda) naming the failed call.
  std::vector<float> time(cudaStream_t stream, int launches, const std::function<void(int i)>& launch);

  // Calls `call(i)` for i in [0, calls) as an application would, each enqueuing its work on
  // `stream`, with nothing held: one pair of events around them all, then a synchronize. Returns
  // the milliseconds per call, the host's side of a call included where it is longer than its
  // work on the GPU. Throws tilemm::Error (cuda) naming the failed call.
  float time_calls(cudaStream_t stream, int calls, const std::function<void(int i)>& call);

  // Well inside what a stream queues before the host would block (stream_hold.hpp).
  static constexpr int kLaunchesPerHold = 128;

 private:
  struct EventDestroyer {
    void operator()(cudaEvent_t event) const { (void)cudaEventDestroy(event); }
  };
  using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroyer>;
  void reserve(int launches);

  std::vector<Event> events_;  // 2 per launch
  detail::StreamHold hold_;
};

}  // namespace tilemm::tuner
