// The free entry points of tilemm/autotune.hpp and tilemm/blas.hpp: each is the member of the
// default context of the same name (tilemm/context.hpp, src/api/context.cpp, blas_api.cpp), and
// the process-wide counters.
#include <string>

#include "candidate_provider.hpp"
#include "dispatcher.hpp"
#include "nvrtc_compiler.hpp"
#include "process_dispatcher.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/blas.hpp"
#include "tilemm/context.hpp"

namespace tilemm {

namespace api {
dispatch::Dispatcher& process_dispatcher() { return default_context().dispatcher(); }
}  // namespace api

std::string problem_class(const Problem& p) { return dispatch::class_of(p); }

std::uint64_t nvrtc_compilations() { return detail::nvrtc_compile_count(); }
std::uint64_t tunings_run() { return dispatch::Dispatcher::tunings_counted(); }
std::uint64_t vendor_heuristic_queries() { return detail::heuristic_query_count(); }

AutotuneResult autotune(const Problem& problem, const Options& options) {
  return default_context().autotune(problem, options);
}

AutotuneResult autotune(std::int64_t M, std::int64_t N, std::int64_t K, const Options& options) {
  return default_context().autotune(M, N, K, options);
}

void gemm(const GemmArgs& args, cudaStream_t stream, const Options& options) {
  default_context().gemm(args, stream, options);
}

void gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, const float* A,
          std::int64_t lda, const float* B, std::int64_t ldb, float beta, float* C,
          std::int64_t ldc, cudaStream_t stream, const Options& options) {
  default_context().gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream, options);
}

void gemm(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N, std::int64_t K,
          float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
          float beta, float* C, std::int64_t ldc, cudaStream_t stream, const Options& options) {
  default_context().gemm(layout, op_a, op_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream,
                         options);
}

void gemm_strided_batched(Layout layout, Op op_a, Op op_b, std::int64_t M, std::int64_t N,
                          std::int64_t K, float alpha, const float* A, std::int64_t lda,
                          std::int64_t stride_a, const float* B, std::int64_t ldb,
                          std::int64_t stride_b, float beta, float* C, std::int64_t ldc,
                          std::int64_t stride_c, std::int64_t batch_count, cudaStream_t stream,
                          const Options& options) {
  default_context().gemm_strided_batched(layout, op_a, op_b, M, N, K, alpha, A, lda, stride_a, B,
                                         ldb, stride_b, beta, C, ldc, stride_c, batch_count,
                                         stream, options);
}

}  // namespace tilemm
