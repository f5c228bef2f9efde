#include "tensor_map.hpp"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <mutex>
#include <string>

#include "cuda_check.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

// cuTensorMapEncodeTiled of the running driver, looked up once (the ABI of CUDA 12.0's).
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static std::once_flag once;
  static PFN_cuTensorMapEncodeTiled_v12000 function = nullptr;
  static cudaError_t status = cudaSuccess;
  static cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSuccess;
  std::call_once(once, [] {
    void* address = nullptr;
    status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &address, 12000,
                                              cudaEnableDefault, &found);
    function = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(address);
  });
  if (status != cudaSuccess)
    throw_cuda_error(status, "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
  if (found != cudaDriverEntryPointSuccess || function == nullptr)
    throw Error(ErrorKind::cuda,
                "tilemm: the CUDA driver has no cuTensorMapEncodeTiled (driver entry point query "
                "result " + std::to_string(static_cast<int>(found)) +
                    "): TMA kernels need a CUDA 12.0 or newer driver");
  return function;
}

}  // namespace

CUtensorMap row_major_map(const float* base, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                          int box_rows, int box_cols, BoxLayout layout) {
  CUtensorMap map{};
  // Innermost dimension first: the columns, then the rows one leading dimension apart.
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = encode_tiled()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      layout == BoxLayout::swizzled_128b ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw Error(ErrorKind::cuda,
                "tilemm: cuTensorMapEncodeTiled failed with CUresult " +
                    std::to_string(static_cast<int>(result)) + " for a " + std::to_string(rows) +
                    " x " + std::to_string(cols) + " matrix, leading dimension " +
                    std::to_string(ld) + ", box " + std::to_string(box_rows) + " x " +
                    std::to_string(box_cols) +
                    (layout == BoxLayout::swizzled_128b ? ", 128-byte swizzle" : ", dense"));
  return map;
}

}  // namespace tilemm::detail
