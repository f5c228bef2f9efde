// The C interface: exceptions become status codes and a per-thread message.
#include "tilemm/tilemm.h"

#include <cstring>
#include <string>

#include "tilemm/blas.hpp"
#include "tilemm/error.hpp"

namespace {

thread_local std::string last_message;

tilemmStatus_t status_of(tilemm::ErrorKind kind) {
  switch (kind) {
    case tilemm::ErrorKind::invalid_argument: return TILEMM_STATUS_INVALID_VALUE;
    case tilemm::ErrorKind::no_device: return TILEMM_STATUS_NO_DEVICE;
    case tilemm::ErrorKind::cuda: return TILEMM_STATUS_CUDA_ERROR;
    case tilemm::ErrorKind::nvrtc: return TILEMM_STATUS_COMPILE_ERROR;
    case tilemm::ErrorKind::cache: return TILEMM_STATUS_CACHE_ERROR;
    case tilemm::ErrorKind::internal: return TILEMM_STATUS_INTERNAL_ERROR;
  }
  return TILEMM_STATUS_INTERNAL_ERROR;
}

// Runs `body`, turning every exception into a status and the thread's last message.
template <typename F>
tilemmStatus_t guarded(F&& body) noexcept {
  try {
    body();
    return TILEMM_STATUS_SUCCESS;
  } catch (const tilemm::Error& e) {
    last_message = e.what();
    return status_of(e.kind());
  } catch (const std::bad_alloc&) {
    last_message = "tilemm: out of host memory";
    return TILEMM_STATUS_INTERNAL_ERROR;
  } catch (const std::exception& e) {
    last_message = std::string("tilemm: ") + e.what();
    return TILEMM_STATUS_INTERNAL_ERROR;
  } catch (...) {
    last_message = "tilemm: unknown failure";
    return TILEMM_STATUS_INTERNAL_ERROR;
  }
}

tilemm::Layout layout_of(tilemmLayout_t l) {
  if (l == TILEMM_ROW_MAJOR) return tilemm::Layout::row_major;
  if (l == TILEMM_COL_MAJOR) return tilemm::Layout::column_major;
  throw tilemm::InvalidArgument("layout", "must be TILEMM_ROW_MAJOR or TILEMM_COL_MAJOR, got " +
                                              std::to_string(static_cast<int>(l)));
}

tilemm::Op op_of(tilemmOperation_t op, const char* name) {
  if (op == TILEMM_OP_N) return tilemm::Op::none;
  if (op == TILEMM_OP_T) return tilemm::Op::transpose;
  throw tilemm::InvalidArgument(name, "must be TILEMM_OP_N or TILEMM_OP_T, got " +
                                          std::to_string(static_cast<int>(op)));
}

}  // namespace

extern "C" {

tilemmStatus_t tilemmSgemm(tilemmLayout_t layout, tilemmOperation_t op_a, tilemmOperation_t op_b,
                           int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                           int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                           int64_t ldc, cudaStream_t stream) {
  return guarded([&] {
    tilemm::gemm(layout_of(layout), op_of(op_a, "op_a"), op_of(op_b, "op_b"), m, n, k, alpha, A,
                 lda, B, ldb, beta, C, ldc, stream);
  });
}

tilemmStatus_t tilemmSgemmStridedBatched(tilemmLayout_t layout, tilemmOperation_t op_a,
                                         tilemmOperation_t op_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float* A, int64_t lda,
                                         int64_t stride_a, const float* B, int64_t ldb,
                                         int64_t stride_b, float beta, float* C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count,
                                         cudaStream_t stream) {
  return guarded([&] {
    tilemm::gemm_strided_batched(layout_of(layout), op_of(op_a, "op_a"), op_of(op_b, "op_b"), m,
                                 n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
                                 stride_c, batch_count, stream);
  });
}

tilemmStatus_t tilemmAutotune(int64_t m, int64_t n, int64_t k, char* winner, size_t winner_size,
                              double* median_ms) {
  return guarded([&] {
    const auto result = tilemm::autotune(m, n, k);
    if (winner != nullptr && winner_size > 0) {
      const std::size_t count = std::min(result.winner.size(), winner_size - 1);
      std::memcpy(winner, result.winner.data(), count);
      winner[count] = '\0';
    }
    if (median_ms != nullptr) *median_ms = result.median_ms;
  });
}

const char* tilemmGetStatusName(tilemmStatus_t status) {
  switch (status) {
    case TILEMM_STATUS_SUCCESS: return "TILEMM_STATUS_SUCCESS";
    case TILEMM_STATUS_INVALID_VALUE: return "TILEMM_STATUS_INVALID_VALUE";
    case TILEMM_STATUS_NO_DEVICE: return "TILEMM_STATUS_NO_DEVICE";
    case TILEMM_STATUS_CUDA_ERROR: return "TILEMM_STATUS_CUDA_ERROR";
    case TILEMM_STATUS_COMPILE_ERROR: return "TILEMM_STATUS_COMPILE_ERROR";
    case TILEMM_STATUS_CACHE_ERROR: return "TILEMM_STATUS_CACHE_ERROR";
    case TILEMM_STATUS_INTERNAL_ERROR: return "TILEMM_STATUS_INTERNAL_ERROR";
  }
  return "unknown status";
}

const char* tilemmGetLastErrorMessage(void) { return last_message.c_str(); }

}  // extern "C"
