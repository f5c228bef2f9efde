// The epilogue every GEMM template ends with: C = alpha * AB + beta * C, where beta == 0 never
// reads C (it may hold NaN, as BLAS allows). Shared by the templates that include it; pasted in by
// cmake/embed_templates.cmake, so the template's hash covers it too.
#ifndef TILEMM_EPILOGUE_CUH
#define TILEMM_EPILOGUE_CUH

// alpha * acc + beta * *c, one output; *c is not read when beta == 0.
static __device__ __forceinline__ float scale(float alpha, float acc, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

// c[0..3] = alpha * v + beta * c[0..3] in one float4 store (c is 16-byte aligned). With beta == 0
// C is not read: it may hold NaN.
static __device__ __forceinline__ void store_scaled4(float* c, float alpha, float4 v, float beta) {
  float4 out;
  if (beta == 0.0f) {
    out = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
  } else {
    const float4 old = *reinterpret_cast<const float4*>(c);
    out = make_float4(fmaf(alpha, v.x, beta * old.x), fmaf(alpha, v.y, beta * old.y),
                      fmaf(alpha, v.z, beta * old.z), fmaf(alpha, v.w, beta * old.w));
  }
  *reinterpret_cast<float4*>(c) = out;
}

#endif  // TILEMM_EPILOGUE_CUH
