// The SM clock and the board's power draw, sampled every 100 ms on a thread while a benchmark
// runs, through NVML (the driver's management library, which nvidia-smi reads too). NVML is
// opened with dlopen when a sampler starts, so that the program still starts on a machine without
// a driver; where it cannot be opened or asked, the sampler says so and reports no samples.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tilemm::bench {

struct BoardSample {
  double seconds;      // since the sampler started
  unsigned sm_mhz;     // NVML_CLOCK_SM
  double board_watts;  // nvmlDeviceGetPowerUsage, milliwatts / 1000
};

class BoardSampler {
 public:
  // Samples the GPU whose PCI bus id is `pci_bus_id` (cudaDeviceGetPCIBusId: NVML numbers its
  // devices in its own order, not CUDA's), until stop() or destruction.
  explicit BoardSampler(const std::string& pci_bus_id);
  ~BoardSampler();
  BoardSampler(const BoardSampler&) = delete;
  BoardSampler& operator=(const BoardSampler&) = delete;

  // Why there are no samples ("" when sampling runs).
  const std::string& unavailable() const { return unavailable_; }
  // Stops sampling and returns the samples, in time order.
  std::vector<BoardSample> stop();

 private:
  std::string unavailable_;
  std::atomic<bool> running_{false};
  std::vector<BoardSample> samples_;
  std::thread thread_;
};

}  // namespace tilemm::bench
