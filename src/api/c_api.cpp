// The C interface: exceptions become status codes and a per-thread message.
#include "tilemm/tilemm.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "redis_url.hpp"
#include "tilemm/blas.hpp"
#include "tilemm/context.hpp"
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

// A C caller may pass any int where an enum is expected, and in C++ even reading such a value
// as the enum type is undefined: the value is taken from the object's bytes instead, as the int
// the caller wrote (the compiler may give the enum an unsigned type, which would print -1 as
// 4294967295).
template <typename Enum>
long long raw_value(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int), "a C enum is passed as an int");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

tilemm::Layout layout_of(const tilemmLayout_t& l) {
  const long long v = raw_value(l);
  if (v == TILEMM_ROW_MAJOR) return tilemm::Layout::row_major;
  if (v == TILEMM_COL_MAJOR) return tilemm::Layout::column_major;
  throw tilemm::InvalidArgument("layout", "must be TILEMM_ROW_MAJOR or TILEMM_COL_MAJOR, got " +
                                              std::to_string(v));
}

tilemm::Op op_of(const tilemmOperation_t& op, const char* name) {
  const long long v = raw_value(op);
  if (v == TILEMM_OP_N) return tilemm::Op::none;
  if (v == TILEMM_OP_T) return tilemm::Op::transpose;
  throw tilemm::InvalidArgument(name, "must be TILEMM_OP_N or TILEMM_OP_T, got " + std::to_string(v));
}

// tilemmSetPrecision's value as a tilemmPrecision_t; -1 until the first call: the environment's.
std::atomic<int> process_precision{-1};

tilemm::Precision precision_of(long long v) {
  if (v == TILEMM_PRECISION_HIGHEST) return tilemm::Precision::highest;
  if (v == TILEMM_PRECISION_HIGH) return tilemm::Precision::high;
  if (v == TILEMM_PRECISION_MEDIUM) return tilemm::Precision::medium;
  throw tilemm::InvalidArgument("precision", "must be TILEMM_PRECISION_HIGHEST, _HIGH or _MEDIUM, "
                                             "got " + std::to_string(v));
}

tilemmPrecision_t c_precision(tilemm::Precision p) {
  switch (p) {
    case tilemm::Precision::highest: return TILEMM_PRECISION_HIGHEST;
    case tilemm::Precision::high: return TILEMM_PRECISION_HIGH;
    case tilemm::Precision::medium: return TILEMM_PRECISION_MEDIUM;
  }
  return TILEMM_PRECISION_HIGHEST;
}

// -1: not set (TILEMM_VENDOR's answer), else 0 or 1 (tilemmSetVendorCandidates).
std::atomic<int> process_vendor{-1};

// tilemmSetRemoteCache's URL once it was called ("" for none); until then the default context's.
std::mutex remote_mutex;
std::optional<std::string> process_remote;

// The options of every C call: the default context's, at the process's precision, vendor choice
// and fleet store.
tilemm::Options call_options() {
  tilemm::Options options = tilemm::default_context().settings().options;
  if (const int set = process_precision.load(std::memory_order_relaxed); set >= 0)
    options.precision = precision_of(set);
  if (const int set = process_vendor.load(std::memory_order_relaxed); set >= 0)
    options.vendor = set == 1;
  std::lock_guard<std::mutex> lock(remote_mutex);
  if (process_remote) options.remote_cache = *process_remote;
  return options;
}

}  // namespace

extern "C" {

tilemmStatus_t tilemmSetPrecision(tilemmPrecision_t precision) {
  return guarded([&] {
    const long long v = raw_value(precision);
    precision_of(v);  // refuses what is not a precision
    process_precision.store(static_cast<int>(v), std::memory_order_relaxed);
  });
}

tilemmStatus_t tilemmSetRemoteCache(const char* url) {
  return guarded([&] {
    const std::string text = url != nullptr ? url : "";
    if (!text.empty()) tilemm::detail::parse_redis_url(text);  // refuses what it cannot use
    std::lock_guard<std::mutex> lock(remote_mutex);
    process_remote = text;
  });
}

tilemmStatus_t tilemmGetPrecision(tilemmPrecision_t* precision) {
  return guarded([&] {
    if (precision == nullptr) throw tilemm::InvalidArgument("precision", "must not be NULL");
    *precision = c_precision(call_options().precision);
  });
}

tilemmStatus_t tilemmSetVendorCandidates(int enabled) {
  return guarded([&] { process_vendor.store(enabled != 0 ? 1 : 0, std::memory_order_relaxed); });
}

tilemmStatus_t tilemmGetVendorCandidates(int* enabled) {
  return guarded([&] {
    if (enabled == nullptr) throw tilemm::InvalidArgument("enabled", "must not be NULL");
    *enabled = call_options().vendor ? 1 : 0;
  });
}

tilemmStatus_t tilemmSgemm(tilemmLayout_t layout, tilemmOperation_t op_a, tilemmOperation_t op_b,
                           int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                           int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                           int64_t ldc, cudaStream_t stream) {
  return guarded([&] {
    tilemm::gemm(layout_of(layout), op_of(op_a, "op_a"), op_of(op_b, "op_b"), m, n, k, alpha, A,
                 lda, B, ldb, beta, C, ldc, stream, call_options());
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
                                 stride_c, batch_count, stream, call_options());
  });
}

tilemmStatus_t tilemmAutotune(int64_t m, int64_t n, int64_t k, char* winner, size_t winner_size,
                              double* median_ms) {
  return guarded([&] {
    // A request to tune: TILEMM_TUNE (off, background) is for gemm()'s implicit tuning.
    tilemm::Options options = call_options();
    options.policy = tilemm::TunePolicy::tune_on_miss;
    const auto result = tilemm::autotune(m, n, k, options);
    if (winner != nullptr && winner_size > 0) {
      const std::size_t count = std::min(result.winner.size(), winner_size - 1);
      std::memcpy(winner, result.winner.data(), count);
      winner[count] = '\0';
    }
    if (median_ms != nullptr) *median_ms = result.median_ms;
  });
}

const char* tilemmGetStatusName(tilemmStatus_t status) {
  switch (raw_value(status)) {
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
