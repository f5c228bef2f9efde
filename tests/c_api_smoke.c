/* Compiled as C: tilemm.h is a C header, and a C program can call tilemm. Exits 0 after a
 * correct 3x2x4 GEMM on the GPU, 77 (reported as skipped) without a device, 1 on failure. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tilemm/tilemm.h"

int main(void) {
  const float a[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; /* 3 x 4, row-major */
  const float b[8] = {1, -1, 2, 0, 0, 3, -2, 1};               /* 4 x 2 */
  float c[6] = {0};
  float *da = NULL, *db = NULL, *dc = NULL;
  int count = 0;
  tilemmStatus_t status;
  /* Values a C caller can pass that are not of the enums: rejected, naming the argument. */
  status = tilemmSgemm((tilemmLayout_t)9, TILEMM_OP_N, TILEMM_OP_N, 1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1, NULL);
  if (status != TILEMM_STATUS_INVALID_VALUE || !strstr(tilemmGetLastErrorMessage(), "'layout'")) {
    printf("bad layout not rejected: %s\n", tilemmGetLastErrorMessage());
    return 1;
  }
  status = tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, (tilemmOperation_t)4, 1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1, NULL);
  if (status != TILEMM_STATUS_INVALID_VALUE || !strstr(tilemmGetLastErrorMessage(), "'op_b'")) {
    printf("bad op_b not rejected: %s\n", tilemmGetLastErrorMessage());
    return 1;
  }
  /* A negative value is reported as the int the caller passed. */
  status = tilemmSgemm(TILEMM_ROW_MAJOR, (tilemmOperation_t)-2, TILEMM_OP_N, 1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1, NULL);
  if (status != TILEMM_STATUS_INVALID_VALUE || !strstr(tilemmGetLastErrorMessage(), "got -2")) {
    printf("bad op_a not reported as -2: %s\n", tilemmGetLastErrorMessage());
    return 1;
  }
  if (tilemmSetPrecision((tilemmPrecision_t)-1) != TILEMM_STATUS_INVALID_VALUE ||
      !strstr(tilemmGetLastErrorMessage(), "got -1")) {
    printf("bad precision not reported as -1: %s\n", tilemmGetLastErrorMessage());
    return 1;
  }
  if (strcmp(tilemmGetStatusName((tilemmStatus_t)99), "unknown status") != 0) return 1;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    status = tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 3, 2, 4, 1.0f, a, 4, b, 2, 0.0f, c, 2, NULL);
    printf("no CUDA device: tilemmSgemm says %s (%s)\n", tilemmGetStatusName(status), tilemmGetLastErrorMessage());
    return status == TILEMM_STATUS_NO_DEVICE ? 77 : 1;
  }
  if (cudaMalloc((void**)&da, sizeof a) || cudaMalloc((void**)&db, sizeof b) || cudaMalloc((void**)&dc, sizeof c)) return 1;
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  status = tilemmSgemm(TILEMM_ROW_MAJOR, TILEMM_OP_N, TILEMM_OP_N, 3, 2, 4, 1.0f, da, 4, db, 2, 0.0f, dc, 2, NULL);
  if (status != TILEMM_STATUS_SUCCESS) {
    printf("tilemmSgemm failed: %s\n", tilemmGetLastErrorMessage());
    return 1;
  }
  cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      float want = 0;
      for (int k = 0; k < 4; ++k) want += a[i * 4 + k] * b[k * 2 + j];
      if (fabsf(c[i * 2 + j] - want) > 1e-4f) {
        printf("C[%d][%d] = %g, want %g\n", i, j, c[i * 2 + j], want);
        return 1;
      }
    }
  printf("tilemmSgemm from C: correct\n");
  return 0;
}
