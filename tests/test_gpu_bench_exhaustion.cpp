// GpuBench when the device cannot hold a problem: its constructor throws and gives back what it
// allocated. In an executable of its own, run alone (tests/CMakeLists.txt): while the driver
// tries the impossible allocation, other processes on the GPU can see cudaStreamCreate fail with
// "out of memory" under a parallel ctest. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "gpu_bench.hpp"
#include "gpu_test_support.hpp"
#include "launch.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

using testing::cuda_ok;
using tuner::GpuBench;

// A and B of set 0 are allocated before its C, which no GPU can hold: the constructor throws,
// and what it took comes back.
TEST(GpuBench, AConstructorThatFailsGivesBackWhatItAllocated) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t big = std::int64_t{1} << 18, K = 4096;  // A and B: 4 GiB each; C: 256 GiB
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  // tilemm's own pool, not the device's free memory: other processes (ctest -j) use the GPU too.
  const int ordinal = current_device().ordinal;
  const std::uint64_t used_before = detail::workspace_bytes_in_use(ordinal);
  try {
    GpuBench bench(current_device(), Problem::dense(big, big, K));
    FAIL() << "a bench with a 256 GiB C was made";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda);
    EXPECT_NE(std::string(e.what()).find("cudaMallocFromPoolAsync"), std::string::npos) << e.what();
  }
  (void)cudaGetLastError();  // the refused allocation is not sticky; leave nothing for later calls
  // The frees are ordered on the bench's stream: once it is done, nothing it took is in use.
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  EXPECT_EQ(detail::workspace_bytes_in_use(ordinal), used_before);
}

}  // namespace
}  // namespace tilemm
