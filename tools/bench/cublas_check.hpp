// The cuBLAS status check of the benchmarks that time cuBLAS beside tilemm.
#pragma once

#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace tilemm::bench {

// Throws std::runtime_error("<what>: <cuBLAS's name for the status>") unless `s` is success.
inline void cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

}  // namespace tilemm::bench
