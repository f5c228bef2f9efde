// device_info(ordinal): the per-process record of a device that the launch path reads on every
// call, and current_device() on top of it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"
#include "tilemm/device.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

// The kind and the message of the error device_info(ordinal) throws; fails the test if none.
std::pair<ErrorKind, std::string> refusal(int ordinal) {
  try {
    (void)device_info(ordinal);
  } catch (const Error& e) {
    return {e.kind(), e.what()};
  }
  ADD_FAILURE() << "device_info(" << ordinal << ") returned";
  return {ErrorKind::internal, ""};
}

TEST(DeviceInfo, OrdinalsOutsideTheSupportedRangeAreRefusedWithOrWithoutADevice) {
  for (const int ordinal : {-1, 256, 1000}) {
    const auto [kind, message] = refusal(ordinal);
    EXPECT_EQ(kind, ErrorKind::no_device) << message;
    EXPECT_NE(message.find(std::to_string(ordinal)), std::string::npos) << message;
  }
}

TEST(DeviceInfo, EachOrdinalIsQueriedOnceAndServedFromMemory) {
  TILEMM_REQUIRE_DEVICE();
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  const DeviceInfo& first = device_info(current);
  EXPECT_EQ(&device_info(current), &first);
  EXPECT_EQ(&current_device(), &first);
  const DeviceInfo fresh = query_device(current);
  EXPECT_EQ(first.ordinal, current);
  EXPECT_EQ(first.name, fresh.name);
  EXPECT_EQ(first.sm_count, fresh.sm_count);
  EXPECT_EQ(first.uuid, fresh.uuid);
  // An ordinal inside the supported range that this machine lacks is refused, not cached.
  const auto [kind, message] = refusal(device_count());
  EXPECT_EQ(kind, ErrorKind::no_device);
  EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
}

}  // namespace
}  // namespace tilemm
