// transpose: dst (cols x rows, leading dimension ldd) = src (rows x cols, leading dimension lds)^T,
// row-major. Not a GEMM family: the cuBLAS-style API uses it to bring op(A) = A^T and
// op(B) = B^T into the row-major, non-transposed form that every family computes, so that the
// tuned winner of the resulting problem serves transposed calls too.
//
// A 32 x 32 tile goes through shared memory so that both the reads and the writes are
// coalesced; the tile is padded by one float because here a warp *does* read a column of it,
// which without the pad would put all 32 reads in one shared-memory bank (where padding pays
// and where it loses: docs/kernels.md).
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS_PER_PASS
#define ROWS_PER_PASS 8
#endif

extern "C" __global__ void __launch_bounds__(TILE * ROWS_PER_PASS)
tilemm_transpose(int rows, int cols, const float* __restrict__ src, long long lds,
                 float* __restrict__ dst, long long ldd) {
  __shared__ float tile[TILE][TILE + 1];
  const int c0 = blockIdx.x * TILE;
  const int r0 = blockIdx.y * TILE;
  for (int i = threadIdx.y; i < TILE; i += ROWS_PER_PASS) {
    const int r = r0 + i;
    const int c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = src[static_cast<long long>(r) * lds + c];
  }
  __syncthreads();  // the whole tile is in before it is read across
  for (int i = threadIdx.y; i < TILE; i += ROWS_PER_PASS) {
    const int c = c0 + i;             // a row of dst
    const int r = r0 + threadIdx.x;   // a column of dst
    if (c < cols && r < rows) dst[static_cast<long long>(c) * ldd + r] = tile[threadIdx.x][i];
  }
}
