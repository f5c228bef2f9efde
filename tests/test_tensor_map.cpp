// The TMA tensor maps a family's enqueue encodes (src/core/tensor_map.cpp): with a driver, a matrix
// the TMA can read encodes and one it cannot is refused with an error that names the call and the
// matrix; without one, the missing encoder is an error that names it, not a crash at load time
// (the library links no driver library).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "gpu_test_support.hpp"
#include "tensor_map.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

using detail::BoxLayout;
using detail::row_major_map;

// The error `encode` throws; fails the test where it throws none or another kind.
template <typename Encode>
std::string cuda_error_of(Encode encode) {
  try {
    encode();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no tilemm::Error thrown";
  return {};
}

TEST(TensorMap, WithoutADriverTheErrorNamesTheMissingEncoder) {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    GTEST_SKIP() << "a CUDA driver is installed: TensorMapOnADevice covers this machine";
  alignas(16) float matrix[16] = {};
  const std::string what =
      cuda_error_of([&] { row_major_map(matrix, 4, 4, 4, 4, 4, BoxLayout::swizzled_128b); });
  EXPECT_NE(what.find("cuTensorMapEncodeTiled"), std::string::npos) << what;
}

TEST(TensorMapOnADevice, AMatrixTheTmaCanReadEncodesAndOthersAreRefusedByName) {
  TILEMM_REQUIRE_DEVICE();
  testing::DeviceBuffer buffer(1024 * 1024 + 4);
  // The shapes the tf32wgmma family asks for, any extents >= 1: A in swizzled boxes of BM rows x
  // 32 floats, B in dense boxes of 32 rows x BN + 8 floats.
  for (const int box_rows : {64, 128, 256}) {
    EXPECT_NO_THROW(
        row_major_map(buffer.get(), 1000, 1000, 1000, box_rows, 32, BoxLayout::swizzled_128b));
    EXPECT_NO_THROW(row_major_map(buffer.get(), 1, 1, 4, box_rows, 32, BoxLayout::swizzled_128b));
  }
  for (const int box_cols : {72, 136}) {
    EXPECT_NO_THROW(row_major_map(buffer.get(), 1000, 1000, 1000, 32, box_cols, BoxLayout::dense));
    EXPECT_NO_THROW(row_major_map(buffer.get(), 1, 1, 4, 32, box_cols, BoxLayout::dense));
  }
  // A swizzled box's rows are 128 bytes at most: 136 floats are refused.
  const std::string wide = cuda_error_of(
      [&] { row_major_map(buffer.get(), 1000, 1000, 1000, 32, 136, BoxLayout::swizzled_128b); });
  EXPECT_NE(wide.find("box 32 x 136, 128-byte swizzle"), std::string::npos) << wide;
  // A leading dimension of 1001 floats is not a multiple of 16 bytes: the TMA cannot step rows.
  const std::string stride = cuda_error_of(
      [&] { row_major_map(buffer.get(), 1000, 1000, 1001, 128, 32, BoxLayout::swizzled_128b); });
  EXPECT_NE(stride.find("cuTensorMapEncodeTiled failed"), std::string::npos) << stride;
  EXPECT_NE(stride.find("leading dimension 1001"), std::string::npos) << stride;
  // A base 4 bytes past a 16-byte boundary.
  const std::string base = cuda_error_of(
      [&] { row_major_map(buffer.get() + 1, 1000, 1000, 1000, 32, 136, BoxLayout::dense); });
  EXPECT_NE(base.find("cuTensorMapEncodeTiled failed"), std::string::npos) << base;
}

}  // namespace
}  // namespace tilemm
