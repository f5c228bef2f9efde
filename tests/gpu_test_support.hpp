// Helpers for the GPU tests: skipping without a device, device buffers, random data and the
// float64 reference that every result is checked against.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cublas_provider.hpp"
#include "cublaslt_names.hpp"
#include "error_bound.hpp"
#include "tilemm/device.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/variant.hpp"

// Skips the calling test where this machine has no usable CUDA device. On a machine with one,
// the test runs: a GPU test is never silently green.
#define TILEMM_REQUIRE_DEVICE()                                          \
  do {                                                                   \
    if (::tilemm::device_count() == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

namespace tilemm::testing {

inline void cuda_ok(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// A device allocation of `count` floats.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&ptr_), std::max<std::size_t>(count, 1) * sizeof(float)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* get() const { return ptr_; }
  void upload(const std::vector<float>& host) {
    cuda_ok(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            "cudaMemcpy H2D");
  }
  std::vector<float> download() const {
    std::vector<float> host(count_);
    cuda_ok(cudaMemcpy(host.data(), ptr_, count_ * sizeof(float), cudaMemcpyDeviceToHost),
            "cudaMemcpy D2H");
    return host;
  }

 private:
  float* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// The arguments of a dense row-major problem (leading dimensions K, N, N) on device buffers.
inline GemmArgs dense_args(std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                           const float* A, const float* B, float beta, float* C) {
  GemmArgs args;
  args.M = M;
  args.N = N;
  args.K = K;
  args.alpha = alpha;
  args.A = A;
  args.lda = std::max<std::int64_t>(K, 1);
  args.B = B;
  args.ldb = N;
  args.beta = beta;
  args.C = C;
  args.ldc = N;
  return args;
}

// A fresh seed per run (printed by the tests on failure), so every run checks new data.
inline std::uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

// Uniform in [-1, 1], never exactly zero-filled.
inline std::vector<float> random_matrix(std::size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> m(count);
  for (auto& x : m) x = dist(rng);
  return m;
}

// float64 reference of C = alpha * A * B + beta * C0 (row-major), plus, per element, the
// magnitude |alpha| * sum |a||b| + |beta * c0| that scales the rounding-error bound.
struct Reference {
  std::vector<double> value;
  std::vector<double> magnitude;
};

inline Reference reference_gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                                const std::vector<float>& A, std::int64_t lda,
                                const std::vector<float>& B, std::int64_t ldb, float beta,
                                const std::vector<float>& C0, std::int64_t ldc) {
  Reference r;
  r.value.assign(static_cast<std::size_t>(M * N), 0.0);
  r.magnitude.assign(static_cast<std::size_t>(M * N), 0.0);
  auto rows = [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> dot(N), absdot(N);
    for (std::int64_t i = begin; i < end; ++i) {
      std::fill(dot.begin(), dot.end(), 0.0);
      std::fill(absdot.begin(), absdot.end(), 0.0);
      for (std::int64_t k = 0; k < K; ++k) {
        const double a = A[i * lda + k];
        const float* b = &B[k * ldb];
        for (std::int64_t j = 0; j < N; ++j) {
          dot[j] += a * b[j];
          absdot[j] += std::fabs(a * b[j]);
        }
      }
      for (std::int64_t j = 0; j < N; ++j) {
        const double c0 = beta == 0.0f ? 0.0 : static_cast<double>(C0[i * ldc + j]);
        r.value[i * N + j] = alpha * dot[j] + beta * c0;
        r.magnitude[i * N + j] = std::fabs(alpha) * absdot[j] + std::fabs(beta * c0);
      }
    }
  };
  const std::int64_t threads =
      std::max<std::int64_t>(1, std::min<std::int64_t>(M, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::int64_t t = 0; t < threads; ++t)
    pool.emplace_back(rows, M * t / threads, M * (t + 1) / threads);
  for (auto& th : pool) th.join();
  return r;
}

// The worst-case FP32 rounding error of a K-term dot product, scaled by each element's
// magnitude: (K + 3) * 2^-24 covers the K accumulation steps in any order plus alpha, beta and
// the final add. It grows with K, and a missed or doubled term is orders of magnitude above it.
inline double tolerance(std::int64_t K, double magnitude) {
  return static_cast<double>(K + 3) * std::ldexp(1.0, -24) * magnitude + 1e-30;
}

// The same for a kernel of `precision` (docs/tuning.md, "Verification bounds"): plus each
// product's error of that precision (tuner::product_error).
inline double tolerance(std::int64_t K, double magnitude, Precision precision) {
  return tolerance(K, magnitude) + tuner::product_error(precision) * magnitude;
}

// The precision a candidate computes at: a variant's, a cuBLASLt algorithm's by its compute type,
// or a cuBLAS call's by its math mode. Throws InvalidArgument for a name that is none of these.
inline Precision candidate_precision(const std::string& name) {
  std::string why;
  if (const auto algo = detail::parse_cublaslt_name(name, why)) return detail::cublaslt_precision(*algo);
  if (const auto call = detail::parse_cublas_name(name, why)) return detail::cublas_precision(*call);
  return precision_of(parse_variant(name));
}

}  // namespace tilemm::testing
