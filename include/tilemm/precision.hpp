// Precision modes: how accurately a GEMM's products are computed, in the vocabulary of PyTorch's
// torch.set_float32_matmul_precision. Part of every cache key: a shape tuned for one precision
// says nothing about another.
#pragma once

#include <optional>
#include <string>

namespace tilemm {

enum class Precision {
  // FP32 FFMA (the families tilemm has always had): every product and sum rounded to FP32. The
  // default; its results do not change when the other modes exist.
  highest,
  // 3xTF32 on tensor cores (sm_80+): each input split on chip into big = tf32(x) and
  // small = tf32(x - big), products big*big + big*small + small*big accumulated in FP32. Accepted
  // by the tuner only within the FP32 error bound (docs/tuning.md).
  high,
  // One TF32 pass on tensor cores (sm_80+): inputs rounded to TF32 (10-bit mantissa), products
  // accumulated in FP32; relative error near 1e-3 (the bound: docs/tuning.md).
  medium,
};

// "highest", "high", "medium".
const char* to_string(Precision p);

// The inverse of to_string; nullopt for any other text (exact spelling, lower case).
std::optional<Precision> parse_precision(const std::string& text);

// Whether a kernel computing at `offered` is at least as accurate as `wanted` asks: highest
// serves every request, high serves high and medium, medium only medium. A request is never
// served less accurately than it asked (can_run refuses such a variant), while a more accurate
// kernel may serve it: the tuner times the FP32 kernels beside a lower precision's own
// (docs/tuning.md).
bool serves(Precision offered, Precision wanted);

}  // namespace tilemm
