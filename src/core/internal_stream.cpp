#include "internal_stream.hpp"

#include <map>
#include <mutex>
#include <vector>

#include "cuda_check.hpp"

namespace tilemm::detail {
namespace {

struct DevicePool {
  std::vector<cudaStream_t> free;
  int made = 0;
};

std::mutex& pools_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Never destroyed: a stream's holder may outlive static destruction (a background worker).
std::map<int, DevicePool>& pools() {
  static auto* by_device = new std::map<int, DevicePool>();
  return *by_device;
}

}  // namespace

InternalStream::InternalStream(int device) : device_(device) {
  {
    std::lock_guard<std::mutex> lock(pools_mutex());
    DevicePool& pool = pools()[device];
    if (!pool.free.empty()) {
      stream_ = pool.free.back();
      pool.free.pop_back();
      return;
    }
  }
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags of one of tilemm's own streams");
  std::lock_guard<std::mutex> lock(pools_mutex());
  ++pools()[device].made;
}

InternalStream::~InternalStream() {
  std::lock_guard<std::mutex> lock(pools_mutex());
  pools()[device_].free.push_back(stream_);
}

int internal_streams_made(int device) {
  std::lock_guard<std::mutex> lock(pools_mutex());
  const auto it = pools().find(device);
  return it == pools().end() ? 0 : it->second.made;
}

}  // namespace tilemm::detail
