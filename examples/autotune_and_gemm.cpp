// An application of the installed tilemm: tune one small problem on the current GPU, run
// tilemm::gemm on it, and check the result against a CPU loop in double precision.
//
// Exit status: 0 when the result is right, or when there is no CUDA device (it says so: the
// program still shows that tilemm is installed and links); 1 on a wrong result or any error.
#include <cuda_runtime_api.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <tilemm/tilemm.hpp>
#include <vector>

namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
  }
}

// Device memory that frees itself.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) {
    check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return data_; }

 private:
  float* data_ = nullptr;
};

// Small integers divided by 8: exact in float, so the CPU reference differs from the GPU result
// only by the GPU's rounding of the sums.
std::vector<float> filled(std::size_t count, unsigned seed) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>(static_cast<int>((i * 7919u + seed * 104729u) % 17u) - 8) / 8.0f;
  }
  return v;
}

int run() {
  if (tilemm::device_count() == 0) {
    std::printf(
        "no CUDA device: nothing to tune or run here (tilemm is installed and links; "
        "NVRTC %d.%d)\n",
        tilemm::nvrtc_version() / 1000, tilemm::nvrtc_version() % 1000 / 10);
    return 0;
  }

  // Row-major C (M x N) = alpha * A (M x K) * B (K x N) + beta * C; not square, so a mix-up of
  // M, N and K shows.
  const std::int64_t M = 256, N = 192, K = 320;
  const float alpha = 1.5f, beta = -0.5f;

  const tilemm::AutotuneResult tuned = tilemm::autotune(M, N, K);
  std::printf(
      "%s, %lld x %lld x %lld (%s): winner %s, %.4f ms, %.2f TFLOP/s, %.1f%% ahead of the "
      "runner-up, from %s, %zu candidates\n",
      tilemm::current_device().name.c_str(), static_cast<long long>(M), static_cast<long long>(N),
      static_cast<long long>(K), tuned.problem_class.c_str(), tuned.winner.c_str(), tuned.median_ms,
      tuned.tflops, 100.0 * tuned.margin, tilemm::to_string(tuned.source), tuned.candidates.size());

  const std::vector<float> a = filled(static_cast<std::size_t>(M * K), 1);
  const std::vector<float> b = filled(static_cast<std::size_t>(K * N), 2);
  const std::vector<float> c0 = filled(static_cast<std::size_t>(M * N), 3);
  DeviceBuffer dA(a.size()), dB(b.size()), dC(c0.size());
  check(cudaMemcpy(dA.get(), a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpy(dB.get(), b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");
  check(cudaMemcpy(dC.get(), c0.data(), c0.size() * sizeof(float), cudaMemcpyHostToDevice),
        "cudaMemcpy");

  tilemm::gemm(M, N, K, alpha, dA.get(), K, dB.get(), N, beta, dC.get(), N);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<float> c(c0.size());
  check(cudaMemcpy(c.data(), dC.get(), c.size() * sizeof(float), cudaMemcpyDeviceToHost),
        "cudaMemcpy");

  // Per element: |got - exact| <= 2 K eps (|alpha| sum |a b| + |beta c0|), a bound on the
  // rounding error of a float sum of K products in any order.
  std::int64_t wrong = 0;
  double worst = 0.0;
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t j = 0; j < N; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double p = static_cast<double>(a[i * K + k]) * b[k * N + j];
        sum += p;
        magnitude += std::fabs(p);
      }
      const double c_in = c0[i * N + j];
      const double exact = alpha * sum + beta * c_in;
      const double bound = 2.0 * static_cast<double>(K) * FLT_EPSILON *
                               (std::fabs(alpha) * magnitude + std::fabs(beta * c_in)) +
                           1e-30;
      const double error = std::fabs(c[i * N + j] - exact);
      worst = std::fmax(worst, error / bound);
      if (!(error <= bound)) ++wrong;
    }
  }
  if (wrong > 0) {
    std::printf("WRONG: %lld of %lld elements outside the error bound (worst %.2f x the bound)\n",
                static_cast<long long>(wrong), static_cast<long long>(M * N), worst);
    return 1;
  }
  std::printf("tilemm::gemm matches the CPU reference (worst error %.3f of the bound)\n", worst);
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "autotune_and_gemm: %s\n", e.what());
    return 1;
  }
}
