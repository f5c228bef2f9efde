#include "differential_run.hpp"

#include "error_bound.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "cuda_check.hpp"
#include "tilemm/tilemm.h"
#include "tilemm/tilemm.hpp"

namespace tilemm::check {
namespace {

// Device memory for one operand's allocation, freed on scope exit.
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    TILEMM_CUDA(cudaMalloc(reinterpret_cast<void**>(&ptr_), std::max<std::size_t>(count, 1) * sizeof(float)));
  }
  ~DeviceArray() { cudaFree(ptr_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  float* get() const { return ptr_; }
  void upload(const std::vector<float>& host) {
    TILEMM_CUDA(cudaMemcpy(ptr_, host.data(), count_ * sizeof(float), cudaMemcpyHostToDevice));
  }
  std::vector<float> download() const {
    std::vector<float> host(count_);
    TILEMM_CUDA(cudaMemcpy(host.data(), ptr_, count_ * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  float* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// One operand as the call sees it: logical rows x cols, stored in `storage` with leading
// dimension `ld`, batch i starting at offset + i * stride floats into its allocation.
struct Operand {
  Storage storage;
  std::int64_t rows, cols, ld, offset, stride, batches;

  std::int64_t index(std::int64_t batch, std::int64_t i, std::int64_t j) const {
    const std::int64_t start = offset + batch * stride;
    return storage.flipped ? start + j * ld + i : start + i * ld + j;
  }
  // Floats to allocate: everything the call may touch, plus a tail it must not.
  std::size_t allocation() const {
    const std::int64_t last = batches > 0 ? (batches - 1) * stride + span_of(storage, ld) : 0;
    return static_cast<std::size_t>(offset + last + 4);
  }
};

// A quiet NaN whose payload marks floats that must never be read into a result or written.
float marker(std::uint32_t tag) {
  const std::uint32_t bits = 0x7fc00000u | (tag & 0x3fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::mt19937_64 data_rng(const CaseSpec& c) {
  std::seed_seq seq{static_cast<std::uint32_t>(c.seed), static_cast<std::uint32_t>(c.seed >> 32),
                    static_cast<std::uint32_t>(c.index), static_cast<std::uint32_t>(c.index >> 32), 0xda7au};
  return std::mt19937_64(seq);
}

// Logical elements uniform in [-1, 1] (or `logical_value` when given), every other float a marker.
std::vector<float> fill(const Operand& op, std::uint32_t tag, std::mt19937_64& rng,
                        const float* logical_value = nullptr) {
  std::vector<float> host(op.allocation(), marker(tag));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t b = 0; b < op.batches; ++b)
    for (std::int64_t i = 0; i < op.rows; ++i)
      for (std::int64_t j = 0; j < op.cols; ++j)
        host[static_cast<std::size_t>(op.index(b, i, j))] = logical_value ? *logical_value : dist(rng);
  return host;
}

struct Reference {
  std::vector<double> value, magnitude;  // M x N, row-major
};

// float64 C = alpha op(A) op(B) + beta C0 for one batch, and each element's error-bound scale.
Reference reference(const CaseSpec& c, const Operand& a, const std::vector<float>& ha,
                    const Operand& b, const std::vector<float>& hb, const Operand& cc,
                    const std::vector<float>& hc, std::int64_t batch) {
  const std::int64_t M = c.M, N = c.N, K = c.K;
  std::vector<double> da(static_cast<std::size_t>(M * K)), db(static_cast<std::size_t>(K * N));
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t k = 0; k < K; ++k) da[static_cast<std::size_t>(i * K + k)] = ha[static_cast<std::size_t>(a.index(batch, i, k))];
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t j = 0; j < N; ++j) db[static_cast<std::size_t>(k * N + j)] = hb[static_cast<std::size_t>(b.index(batch, k, j))];
  Reference r;
  r.value.assign(static_cast<std::size_t>(M * N), 0.0);
  r.magnitude.assign(static_cast<std::size_t>(M * N), 0.0);
  auto rows = [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> dot(static_cast<std::size_t>(N)), absdot(static_cast<std::size_t>(N));
    for (std::int64_t i = begin; i < end; ++i) {
      std::fill(dot.begin(), dot.end(), 0.0);
      std::fill(absdot.begin(), absdot.end(), 0.0);
      for (std::int64_t k = 0; k < K; ++k) {
        const double x = da[static_cast<std::size_t>(i * K + k)];
        const double* row = &db[static_cast<std::size_t>(k * N)];
        for (std::int64_t j = 0; j < N; ++j) {
          dot[static_cast<std::size_t>(j)] += x * row[j];
          absdot[static_cast<std::size_t>(j)] += std::fabs(x * row[j]);
        }
      }
      for (std::int64_t j = 0; j < N; ++j) {
        // beta == 0 never reads C (which may hold NaN), as in BLAS.
        const double c0 = c.beta == 0.0f ? 0.0 : static_cast<double>(hc[static_cast<std::size_t>(cc.index(batch, i, j))]);
        const std::size_t e = static_cast<std::size_t>(i * N + j);
        r.value[e] = static_cast<double>(c.alpha) * dot[static_cast<std::size_t>(j)] + static_cast<double>(c.beta) * c0;
        r.magnitude[e] = std::fabs(static_cast<double>(c.alpha)) * absdot[static_cast<std::size_t>(j)] +
                         std::fabs(static_cast<double>(c.beta) * c0);
      }
    }
  };
  const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const std::int64_t threads = work < 1e6 ? 1
      : std::max<std::int64_t>(1, std::min<std::int64_t>(M, std::thread::hardware_concurrency()));
  if (threads == 1) {
    rows(0, M);
  } else {
    std::vector<std::thread> pool;
    for (std::int64_t t = 0; t < threads; ++t) pool.emplace_back(rows, M * t / threads, M * (t + 1) / threads);
    for (auto& th : pool) th.join();
  }
  return r;
}

// The call itself; an error of the call becomes the returned text (empty: it succeeded).
std::string call(const CaseSpec& c, const float* A, const float* B, float* C, const Options& options) {
  const auto c_layout = c.layout == Layout::row_major ? TILEMM_ROW_MAJOR : TILEMM_COL_MAJOR;
  const auto c_op = [](Op op) { return op == Op::none ? TILEMM_OP_N : TILEMM_OP_T; };
  try {
    switch (c.entry) {
      case EntryPoint::gemm_row_major:
        gemm(c.M, c.N, c.K, c.alpha, A, c.lda, B, c.ldb, c.beta, C, c.ldc, nullptr, options);
        return "";
      case EntryPoint::gemm_blas:
        gemm(c.layout, c.op_a, c.op_b, c.M, c.N, c.K, c.alpha, A, c.lda, B, c.ldb, c.beta, C,
             c.ldc, nullptr, options);
        return "";
      case EntryPoint::gemm_strided_batched:
        gemm_strided_batched(c.layout, c.op_a, c.op_b, c.M, c.N, c.K, c.alpha, A, c.lda,
                             c.stride_a, B, c.ldb, c.stride_b, c.beta, C, c.ldc, c.stride_c,
                             c.batch_count, nullptr, options);
        return "";
      case EntryPoint::c_sgemm: {
        const tilemmStatus_t s = tilemmSgemm(c_layout, c_op(c.op_a), c_op(c.op_b), c.M, c.N, c.K,
                                             c.alpha, A, c.lda, B, c.ldb, c.beta, C, c.ldc, nullptr);
        return s == TILEMM_STATUS_SUCCESS ? "" : std::string(tilemmGetStatusName(s)) + ": " + tilemmGetLastErrorMessage();
      }
      case EntryPoint::c_sgemm_strided_batched: {
        const tilemmStatus_t s = tilemmSgemmStridedBatched(
            c_layout, c_op(c.op_a), c_op(c.op_b), c.M, c.N, c.K, c.alpha, A, c.lda, c.stride_a, B,
            c.ldb, c.stride_b, c.beta, C, c.ldc, c.stride_c, c.batch_count, nullptr);
        return s == TILEMM_STATUS_SUCCESS ? "" : std::string(tilemmGetStatusName(s)) + ": " + tilemmGetLastErrorMessage();
      }
    }
    return "unknown entry point";
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  }
}

}  // namespace

double error_bound(std::int64_t K, double magnitude, Precision precision) {
  return (static_cast<double>(K + 2) * std::ldexp(1.0, -24) + tuner::product_error(precision)) *
         magnitude;
}

CaseOutcome run_case(const CaseSpec& c, const Options& options) {
  const std::int64_t batches = c.batch_count;
  const Operand a{storage_of(c.layout, c.op_a, c.M, c.K), c.M, c.K, c.lda, c.offset_a, c.stride_a, batches};
  const Operand b{storage_of(c.layout, c.op_b, c.K, c.N), c.K, c.N, c.ldb, c.offset_b, c.stride_b, batches};
  const Operand cc{storage_of(c.layout, Op::none, c.M, c.N), c.M, c.N, c.ldc, c.offset_c, c.stride_c, batches};
  std::mt19937_64 rng = data_rng(c);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto ha = fill(a, 0xa, rng), hb = fill(b, 0xb, rng);
  // beta == 0 over a C full of NaN: the call must not read it.
  const auto hc = fill(cc, 0xc, rng, c.beta == 0.0f ? &nan : nullptr);

  DeviceArray A(ha.size()), B(hb.size()), C(hc.size());
  A.upload(ha);
  B.upload(hb);
  C.upload(hc);
  CaseOutcome outcome;
  std::ostringstream failure;
  failure.precision(9);
  const std::string error = call(c, A.get() + c.offset_a, B.get() + c.offset_b, C.get() + c.offset_c, options);
  const cudaError_t synced = cudaDeviceSynchronize();
  if (!error.empty() || synced != cudaSuccess) {
    failure << describe(c) << "\n  the call failed: "
            << (error.empty() ? std::string("CUDA: ") + cudaGetErrorString(synced) : error);
    outcome.failure = failure.str();
    if (synced != cudaSuccess) (void)cudaGetLastError();
    return outcome;
  }
  const auto out_a = A.download(), out_b = B.download(), out_c = C.download();

  std::int64_t wrong = 0, overwritten = 0;
  constexpr int kShown = 5;
  for (std::size_t i = 0; i < ha.size(); ++i)
    if (!same_bits(ha[i], out_a[i]) && overwritten++ < kShown) failure << "\n  A[" << i << "] was changed";
  for (std::size_t i = 0; i < hb.size(); ++i)
    if (!same_bits(hb[i], out_b[i]) && overwritten++ < kShown) failure << "\n  B[" << i << "] was changed";
  std::vector<bool> is_result(hc.size(), false);
  for (std::int64_t batch = 0; batch < batches; ++batch) {
    if (c.M == 0 || c.N == 0) break;
    const Reference ref = reference(c, a, ha, b, hb, cc, hc, batch);
    for (std::int64_t i = 0; i < c.M; ++i)
      for (std::int64_t j = 0; j < c.N; ++j) {
        const std::size_t at = static_cast<std::size_t>(cc.index(batch, i, j));
        const std::size_t e = static_cast<std::size_t>(i * c.N + j);
        is_result[at] = true;
        ++outcome.elements_checked;
        const double got = out_c[at];
        const double bound = error_bound(c.K, ref.magnitude[e], options.precision);
        if (!(std::isfinite(got) && std::fabs(got - ref.value[e]) <= bound) && wrong++ < kShown)
          failure << "\n  batch " << batch << " C(" << i << ", " << j << ") = " << got
                  << ", float64 reference " << ref.value[e] << ", allowed error " << bound;
      }
  }
  for (std::size_t i = 0; i < hc.size(); ++i)
    if (!is_result[i] && !same_bits(hc[i], out_c[i]) && overwritten++ < kShown)
      failure << "\n  C's allocation at float " << i << " is outside every result but was written";
  if (wrong == 0 && overwritten == 0) {
    outcome.passed = true;
    return outcome;
  }
  std::ostringstream text;
  text << describe(c) << "\n  " << wrong << " of " << outcome.elements_checked
       << " elements of C outside the error bound, " << overwritten
       << " floats changed that the call must not write" << failure.str();
  outcome.failure = text.str();
  return outcome;
}

}  // namespace tilemm::check
