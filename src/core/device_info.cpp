// Device identity and limits from the CUDA runtime, plus NVRTC's version.
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <cstdio>
#include <atomic>
#include <mutex>

#include "cuda_check.hpp"
#include "log.hpp"
#include "tilemm/device.hpp"

namespace tilemm {

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::string DeviceInfo::model_key() const {
  return name + "|" + arch() + "|" + std::to_string(sm_count) + "sm|" +
         std::to_string(total_memory >> 20) + "MiB";
}

double DeviceInfo::fp32_peak_tflops() const {
  return static_cast<double>(sm_count) * 128.0 * 2.0 * clock_khz * 1e3 / 1e12;
}

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device is not sticky; leave no error behind
    return 0;
  }
  return count;
}

int nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    throw Error(ErrorKind::nvrtc, "tilemm: nvrtcVersion failed");
  return major * 1000 + minor * 10;
}

namespace {

std::string format_uuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

int attribute(cudaDeviceAttr attr, int ordinal) {
  int value = 0;
  TILEMM_CUDA(cudaDeviceGetAttribute(&value, attr, ordinal));
  return value;
}

}  // namespace

DeviceInfo query_device(int ordinal) {
  const int count = device_count();
  if (count == 0) throw Error(ErrorKind::no_device, "tilemm: no CUDA device (or no driver) found");
  if (ordinal < 0 || ordinal >= count)
    throw Error(ErrorKind::no_device, "tilemm: device " + std::to_string(ordinal) +
                                          " does not exist; this machine has " +
                                          std::to_string(count));
  cudaDeviceProp prop{};
  TILEMM_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sm_count = prop.multiProcessorCount;
  d.total_memory = prop.totalGlobalMem;
  d.uuid = format_uuid(prop.uuid);
  TILEMM_CUDA(cudaDriverGetVersion(&d.driver_version));
  TILEMM_CUDA(cudaRuntimeGetVersion(&d.runtime_version));
  d.nvrtc_version = nvrtc_version();
  d.max_threads_per_block = prop.maxThreadsPerBlock;
  d.max_shared_per_block_optin = prop.sharedMemPerBlockOptin;
  d.max_grid_x = prop.maxGridSize[0];
  d.max_grid_y = prop.maxGridSize[1];
  d.max_grid_z = prop.maxGridSize[2];
  d.clock_khz = attribute(cudaDevAttrClockRate, ordinal);
  d.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  return d;
}

const DeviceInfo& device_info(int ordinal) {
  // On the hot path of every gemm call: one atomic load once the ordinal is known. Entries are
  // created once and never freed, so the references handed out stay valid.
  constexpr int kMaxOrdinals = 256;
  static std::atomic<const DeviceInfo*> known[kMaxOrdinals] = {};
  static std::mutex create_mutex;
  if (ordinal < 0 || ordinal >= kMaxOrdinals)
    throw Error(ErrorKind::no_device, "tilemm: device ordinal " + std::to_string(ordinal) +
                                          " is outside 0.." + std::to_string(kMaxOrdinals - 1) +
                                          ", the ordinals tilemm supports");
  if (const DeviceInfo* d = known[ordinal].load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lock(create_mutex);
  if (const DeviceInfo* d = known[ordinal].load(std::memory_order_acquire)) return *d;
  const DeviceInfo* d = new DeviceInfo(detail::timed_step(
      [ordinal](const DeviceInfo& q) {
        return "device " + std::to_string(ordinal) + " (" + q.name + ") queried";
      },
      [ordinal] { return query_device(ordinal); }));
  known[ordinal].store(d, std::memory_order_release);
  return *d;
}

const DeviceInfo& current_device() {
  int ordinal = 0;
  const cudaError_t status = cudaGetDevice(&ordinal);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(ErrorKind::no_device, std::string("tilemm: no CUDA device (or no driver): "
                                                  "cudaGetDevice failed: ") +
                                          cudaGetErrorString(status));
  }
  return device_info(ordinal);
}

}  // namespace tilemm
