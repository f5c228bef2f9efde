// gemm() and autotune(), and the public helpers of tilemm/autotune.hpp: the free functions run
// through the default context (tilemm/context.hpp, src/api/context.cpp).
#include <string>

#include "candidate_provider.hpp"
#include "dispatcher.hpp"
#include "nvrtc_compiler.hpp"
#include "process_dispatcher.hpp"
#include "tilemm/autotune.hpp"
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

}  // namespace tilemm
