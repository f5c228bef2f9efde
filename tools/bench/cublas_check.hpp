// The cuBLAS calls of the benchmarks that time cuBLAS beside tilemm: the status check, and SGEMM
// on tilemm's row-major operands.
#pragma once

#include <cublas_v2.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tilemm::bench {

// Throws std::runtime_error("<what>: <cuBLAS's name for the status>") unless `s` is success.
inline void cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

// C = A B for dense row-major A (m x k), B (k x n) and C (m x n), with the math mode `handle` has:
// the column-major C^T = B^T A^T that cuBLAS computes on the same memory.
inline void row_major_sgemm(cublasHandle_t handle, std::int64_t m, std::int64_t n, std::int64_t k,
                            const float* A, const float* B, float* C) {
  const float one = 1.0f, zero = 0.0f;
  cublas(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &one, B, static_cast<int>(n), A, static_cast<int>(k), &zero,
                     C, static_cast<int>(n)),
         "cublasSgemm");
}

}  // namespace tilemm::bench
