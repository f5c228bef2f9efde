// The identity and the limits of a CUDA device, as one value.
#pragma once

#include <cstdint>
#include <string>

namespace tilemm {

struct DeviceInfo {
  // Identity.
  int ordinal = 0;
  std::string name;            // "NVIDIA H200"
  int cc_major = 0;            // compute capability
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t total_memory = 0;  // bytes
  std::string uuid;            // "GPU-xxxxxxxx-xxxx-...", empty for synthetic devices
  int driver_version = 0;      // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;     // cudaRuntimeGetVersion of the runtime linked into tilemm
  int nvrtc_version = 0;       // major * 1000 + minor * 10, like the CUDA versions

  // Limits that decide whether a variant can launch (see can_run).
  int max_threads_per_block = 1024;
  std::uint64_t max_shared_per_block_optin = 48 * 1024;  // bytes, with the opt-in attribute
  int max_grid_x = 2147483647;
  int max_grid_y = 65535;
  int max_grid_z = 65535;
  int clock_khz = 0;         // SM clock, for the FP32 peak figure
  std::uint64_t l2_bytes = 0;

  // "sm_90": the exact architecture NVRTC compiles CUBIN for.
  std::string arch() const;
  // The key that tuning results are filed under: the device model (name, architecture, SM count,
  // memory), not the individual card, so identical cards share results. Driver, runtime and NVRTC
  // versions are stored beside each result and make it stale, not absent (see cache/).
  std::string model_key() const;
  // FP32 FMA peak in TFLOP/s: SMs x 128 lanes x 2 x clock (128 FP32 lanes per SM from sm_80 on).
  double fp32_peak_tflops() const;
};

// Number of CUDA devices; 0 where there is no device or no driver (never throws).
int device_count() noexcept;

// Queries device `ordinal` (cudaGetDeviceProperties and friends; a few microseconds after the
// first call, which initializes the CUDA runtime). Throws tilemm::Error (kind no_device) when
// there is no driver or no such device.
DeviceInfo query_device(int ordinal);

// Device `ordinal`, queried once per process (query_device) and then served from memory: no CUDA
// call after the first. Errors as query_device.
const DeviceInfo& device_info(int ordinal);

// The device current on the calling host thread: device_info(cudaGetDevice()).
const DeviceInfo& current_device();

// NVRTC's version as major * 1000 + minor * 10; works without a GPU.
int nvrtc_version();

}  // namespace tilemm
