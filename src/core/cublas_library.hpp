// cuBLAS, loaded at run time like cuBLASLt (toolkit_library.hpp): cublas_api.h is included for its
// types only; every call goes through a pointer resolved with dlsym and checked.
#pragma once

#include <cublas_api.h>

#include <string>

namespace tilemm::detail {

struct Cublas {
  decltype(&cublasGetProperty) get_property = nullptr;
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  int version = 0;   // major * 10000 + minor * 100 + patch: 130100 for 13.1.0
  std::string path;  // the file it was loaded from
};

// The loaded library, or nullptr where it is unavailable: libcublas.so.13, then libcublas.so;
// where neither loads, one info line says so and why. Thread-safe; loaded once per process.
const Cublas* cublas();

// Throws tilemm::Error "tilemm: <call> failed: cuBLAS status <n>" unless `status` is success.
void check_cublas(cublasStatus_t status, const char* call);

}  // namespace tilemm::detail
