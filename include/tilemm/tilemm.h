/* tilemm's C interface, for C and for other languages' foreign-function interfaces.
 *
 * Every function returns a tilemmStatus_t; on failure tilemmGetLastErrorMessage() returns the
 * message of the last failed call on the calling thread (what failed and why, naming the bad
 * argument), valid until that thread's next tilemm call. Semantics are those of the C++ API
 * (tilemm/blas.hpp): C = alpha * op(A) * op(B) + beta * C, BLAS leading dimensions, device
 * pointers, asynchronous on `stream` (NULL: the legacy default stream), tuning on a miss unless
 * TILEMM_TUNE=off, at the precision tilemmSetPrecision set (TILEMM_PRECISION until then). No
 * function throws or exits. */
#ifndef TILEMM_TILEMM_H
#define TILEMM_TILEMM_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TILEMM_STATUS_SUCCESS = 0,
  TILEMM_STATUS_INVALID_VALUE = 1,  /* a bad argument: the message names it */
  TILEMM_STATUS_NO_DEVICE = 2,      /* no CUDA device or driver */
  TILEMM_STATUS_CUDA_ERROR = 3,     /* a CUDA runtime call failed */
  TILEMM_STATUS_COMPILE_ERROR = 4,  /* NVRTC failed (the message carries its log) */
  TILEMM_STATUS_CACHE_ERROR = 5,    /* the tuning cache or a JSON file */
  TILEMM_STATUS_INTERNAL_ERROR = 6  /* anything else: a bug in tilemm */
} tilemmStatus_t;

typedef enum { TILEMM_ROW_MAJOR = 0, TILEMM_COL_MAJOR = 1 } tilemmLayout_t;
typedef enum { TILEMM_OP_N = 0, TILEMM_OP_T = 1 } tilemmOperation_t;

/* Precision modes (tilemm/precision.hpp; the names of PyTorch's set_float32_matmul_precision):
 * HIGHEST is FP32 FFMA, HIGH is 3xTF32 on tensor cores (FP32-level accuracy), MEDIUM one TF32
 * pass (relative error near 1e-3). */
typedef enum {
  TILEMM_PRECISION_HIGHEST = 0,
  TILEMM_PRECISION_HIGH = 1,
  TILEMM_PRECISION_MEDIUM = 2
} tilemmPrecision_t;

/* Sets the precision of every later tilemmSgemm, tilemmSgemmStridedBatched and tilemmAutotune
 * call of the process, on every thread (calls already running keep theirs). Until the first
 * call it is TILEMM_PRECISION's (highest when unset). INVALID_VALUE for another value. Cheap: no
 * CUDA call. */
tilemmStatus_t tilemmSetPrecision(tilemmPrecision_t precision);
/* Makes the Redis store at url ("redis://[user:password@]host:port[/db]") the fleet's shared store
 * of tuning results for every later call of the process (Options::remote_cache); NULL or "" for
 * none. Until the first call it is TILEMM_REMOTE_CACHE's. INVALID_VALUE for a URL tilemm cannot
 * read (the message never shows the password). Cheap: nothing is connected until a call misses. */
tilemmStatus_t tilemmSetRemoteCache(const char* url);
/* Writes the precision later calls use to *precision (INVALID_VALUE when it is NULL). */
tilemmStatus_t tilemmGetPrecision(tilemmPrecision_t* precision);

/* Whether later calls of the process may run cuBLASLt's algorithms (vendor candidates) where
 * they are faster than tilemm's own kernels: enabled != 0 allows them, 0 excludes them (as
 * TILEMM_VENDOR=off, Options::vendor). Until the first call it is TILEMM_VENDOR's answer (on
 * unless "off"). Cheap: no CUDA call. */
tilemmStatus_t tilemmSetVendorCandidates(int enabled);
/* Writes 1 or 0 to *enabled (INVALID_VALUE when it is NULL). */
tilemmStatus_t tilemmGetVendorCandidates(int* enabled);

tilemmStatus_t tilemmSgemm(tilemmLayout_t layout, tilemmOperation_t op_a, tilemmOperation_t op_b,
                           int64_t m, int64_t n, int64_t k, float alpha, const float* A,
                           int64_t lda, const float* B, int64_t ldb, float beta, float* C,
                           int64_t ldc, cudaStream_t stream);

tilemmStatus_t tilemmSgemmStridedBatched(tilemmLayout_t layout, tilemmOperation_t op_a,
                                         tilemmOperation_t op_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float* A, int64_t lda,
                                         int64_t stride_a, const float* B, int64_t ldb,
                                         int64_t stride_b, float beta, float* C, int64_t ldc,
                                         int64_t stride_c, int64_t batch_count,
                                         cudaStream_t stream);

/* Tunes (or looks up) a row-major, dense M x N x K problem on the current device, whatever
 * TILEMM_TUNE says (it governs the implicit tuning of the Sgemm calls); writes the
 * winner's canonical name (NUL-terminated, truncated to winner_size - 1) when winner is not
 * NULL, and its median time when median_ms is not NULL. */
tilemmStatus_t tilemmAutotune(int64_t m, int64_t n, int64_t k, char* winner, size_t winner_size,
                              double* median_ms);

/* "TILEMM_STATUS_INVALID_VALUE", ...; "unknown status" for other values. Never NULL. */
const char* tilemmGetStatusName(tilemmStatus_t status);
/* The last failed call's message on this thread; "" if none has failed. Never NULL. */
const char* tilemmGetLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif /* TILEMM_TILEMM_H */
