#include "launch_timer.hpp"

#include <algorithm>

#include "cuda_check.hpp"

namespace tilemm::tuner {

LaunchTimer::LaunchTimer(const DeviceInfo& device) : hold_(device) {}

LaunchTimer::~LaunchTimer() = default;

void LaunchTimer::reserve(int launches) {
  while (events_.size() < 2 * static_cast<std::size_t>(launches)) {
    cudaEvent_t event = nullptr;
    TILEMM_CUDA(cudaEventCreate(&event));
    events_.emplace_back(event);
  }
}

std::vector<float> LaunchTimer::time(cudaStream_t stream, int launches,
                                     const std::function<void(int i)>& launch) {
  if (launches <= 0) return {};
  reserve(launches);
  for (int begin = 0; begin < launches; begin += kLaunchesPerHold) {
    const int end = std::min(launches, begin + kLaunchesPerHold);
    hold_.run_held(stream, [&] {
      for (int i = begin; i < end; ++i) {
        TILEMM_CUDA(cudaEventRecord(events_[2 * i].get(), stream));
        launch(i);
        TILEMM_CUDA(cudaEventRecord(events_[2 * i + 1].get(), stream));
      }
    });
  }
  TILEMM_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> ms(static_cast<std::size_t>(launches));
  for (int i = 0; i < launches; ++i)
    TILEMM_CUDA(cudaEventElapsedTime(&ms[i], events_[2 * i].get(), events_[2 * i + 1].get()));
  return ms;
}

float LaunchTimer::time_calls(cudaStream_t stream, int calls,
                              const std::function<void(int i)>& call) {
  if (calls <= 0) return 0.0f;
  reserve(1);
  TILEMM_CUDA(cudaEventRecord(events_[0].get(), stream));
  for (int i = 0; i < calls; ++i) call(i);
  TILEMM_CUDA(cudaEventRecord(events_[1].get(), stream));
  TILEMM_CUDA(cudaEventSynchronize(events_[1].get()));
  float ms = 0.0f;
  TILEMM_CUDA(cudaEventElapsedTime(&ms, events_[0].get(), events_[1].get()));
  return ms / static_cast<float>(calls);
}

}  // namespace tilemm::tuner
