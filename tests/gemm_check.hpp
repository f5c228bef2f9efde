// Runs a GEMM through a callable on fresh random data and counts elements outside the float64
// reference's error bound.
#pragma once

#include <functional>
#include <sstream>

#include "gpu_test_support.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::testing {

struct GemmCheck {
  std::int64_t wrong = 0;
  std::string first;  // the first wrong element, described
};

inline GemmCheck check_gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                            float beta, const std::function<void(const GemmArgs&)>& run) {
  std::mt19937_64 rng(fresh_seed());
  const auto a = random_matrix(static_cast<std::size_t>(M * K), rng);
  const auto b = random_matrix(static_cast<std::size_t>(K * N), rng);
  const auto c0 = random_matrix(static_cast<std::size_t>(M * N), rng);
  const auto ref = reference_gemm(M, N, K, alpha, a, K, b, N, beta, c0, N);
  DeviceBuffer A(a.size()), B(b.size()), C(c0.size());
  A.upload(a);
  B.upload(b);
  C.upload(c0);
  const GemmArgs args = dense_args(M, N, K, alpha, A.get(), B.get(), beta, C.get());
  run(args);
  cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after gemm");
  const auto out = C.download();
  GemmCheck result;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const double err = std::fabs(out[i] - ref.value[i]);
    if (!(std::isfinite(out[i]) && err <= tolerance(K, ref.magnitude[i]))) {
      if (result.wrong++ == 0) {
        std::ostringstream s;
        s << "C[" << i / N << "][" << i % N << "] = " << out[i] << ", reference " << ref.value[i];
        result.first = s.str();
      }
    }
  }
  return result;
}

}  // namespace tilemm::testing
