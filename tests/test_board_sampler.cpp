// tilemm-sustained-bench's sampler of the SM clock and board power (tools/bench/board_sampler.cpp):
// where NVML can be opened (a machine with a driver) it samples plausible values about every
// 100 ms; where it cannot, it says why and samples nothing, and the program still runs.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>

#include "../tools/bench/board_sampler.hpp"
#include "tilemm/device.hpp"

namespace {

// The PCI bus id of device 0, or "" where CUDA has no device (then NVML is asked for a bus id it
// cannot have, which must fail with a reason, not crash).
std::string first_bus_id() {
  char id[32] = {};
  if (tilemm::device_count() == 0 || cudaDeviceGetPCIBusId(id, sizeof id, 0) != cudaSuccess) return "";
  return id;
}

TEST(BoardSampler, SamplesPlausibleValuesOrSaysWhyNot) {
  const std::string bus_id = first_bus_id();
  tilemm::bench::BoardSampler sampler(bus_id.empty() ? "0000:ff:1f.7" : bus_id);
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  const auto samples = sampler.stop();
  if (!sampler.unavailable().empty()) {
    EXPECT_TRUE(samples.empty()) << sampler.unavailable();
    // Without a device CUDA can see, there is nothing to sample, whatever NVML can do.
    return;
  }
  ASSERT_FALSE(bus_id.empty()) << "a made-up bus id was sampled";
  // Every 100 ms for 450 ms: 4 or 5 samples, in time order, with a clock and a power draw a
  // running GPU can have.
  ASSERT_GE(samples.size(), 3u);
  EXPECT_LE(samples.size(), 6u);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_GT(samples[i].sm_mhz, 0u);
    EXPECT_LT(samples[i].sm_mhz, 5000u);
    EXPECT_GT(samples[i].board_watts, 1.0);
    EXPECT_LT(samples[i].board_watts, 2000.0);
    if (i > 0) {
      EXPECT_GT(samples[i].seconds, samples[i - 1].seconds);
    }
  }
  // stop() is idempotent: the destructor calls it again.
  EXPECT_EQ(sampler.stop().size(), samples.size());
}

}  // namespace
