// FP32 to TF32 rounding, shared by the tensor-core templates (tf32mma.cu, tf32wgmma.cu); pasted in
// by cmake/embed_templates.cmake, so the template's hash covers it too.
#ifndef TILEMM_TF32_CUH
#define TILEMM_TF32_CUH

// x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero), as the 32-bit register
// an MMA operand takes.
static __device__ __forceinline__ unsigned tf32_bits(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// The same value as a float.
static __device__ __forceinline__ float to_tf32(float x) { return __uint_as_float(tf32_bits(x)); }

#endif  // TILEMM_TF32_CUH
