#include "board_sampler.hpp"

#include <dlfcn.h>

namespace tilemm::bench {
namespace {

// The few NVML entry points the sampler calls, declared here instead of through nvml.h (which the
// CUDA toolkit here does not ship): their C ABI has been stable since NVML's _v2 names.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlHandleByBusId = int (*)(const char*, NvmlDevice*);
using NvmlClockInfo = int (*)(NvmlDevice, int, unsigned*);
using NvmlPowerUsage = int (*)(NvmlDevice, unsigned*);
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // nvmlClockType_t NVML_CLOCK_SM

struct Nvml {
  void* library = nullptr;
  NvmlInit init = nullptr;
  NvmlShutdown shutdown = nullptr;
  NvmlHandleByBusId handle_by_bus_id = nullptr;
  NvmlClockInfo clock_info = nullptr;
  NvmlPowerUsage power_usage = nullptr;
};

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

BoardSampler::BoardSampler(const std::string& pci_bus_id) {
  Nvml nvml;
  nvml.library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml.library == nullptr) {
    unavailable_ = "libnvidia-ml.so.1 could not be opened (no driver?)";
    return;
  }
  nvml.init = symbol<NvmlInit>(nvml.library, "nvmlInit_v2");
  nvml.shutdown = symbol<NvmlShutdown>(nvml.library, "nvmlShutdown");
  nvml.handle_by_bus_id = symbol<NvmlHandleByBusId>(nvml.library, "nvmlDeviceGetHandleByPciBusId_v2");
  nvml.clock_info = symbol<NvmlClockInfo>(nvml.library, "nvmlDeviceGetClockInfo");
  nvml.power_usage = symbol<NvmlPowerUsage>(nvml.library, "nvmlDeviceGetPowerUsage");
  NvmlDevice device = nullptr;
  if (!nvml.init || !nvml.shutdown || !nvml.handle_by_bus_id || !nvml.clock_info || !nvml.power_usage) {
    unavailable_ = "libnvidia-ml.so.1 lacks an entry point the sampler needs";
  } else if (const int s = nvml.init(); s != kNvmlSuccess) {
    unavailable_ = "nvmlInit_v2 failed with NVML status " + std::to_string(s);
  } else if (const int h = nvml.handle_by_bus_id(pci_bus_id.c_str(), &device); h != kNvmlSuccess) {
    unavailable_ = "NVML has no device at PCI bus id " + pci_bus_id + " (status " + std::to_string(h) + ")";
    nvml.shutdown();
  }
  if (!unavailable_.empty()) {
    dlclose(nvml.library);
    return;
  }
  running_ = true;
  thread_ = std::thread([this, nvml, device] {
    const auto start = std::chrono::steady_clock::now();
    while (running_) {
      unsigned mhz = 0, milliwatts = 0;
      // A failed read leaves a gap rather than a zero that would drag the means down.
      if (nvml.clock_info(device, kNvmlClockSm, &mhz) == kNvmlSuccess &&
          nvml.power_usage(device, &milliwatts) == kNvmlSuccess) {
        const std::chrono::duration<double> t = std::chrono::steady_clock::now() - start;
        samples_.push_back({t.count(), mhz, milliwatts / 1000.0});
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    nvml.shutdown();
    dlclose(nvml.library);
  });
}

std::vector<BoardSample> BoardSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  return samples_;
}

BoardSampler::~BoardSampler() { stop(); }

}  // namespace tilemm::bench
