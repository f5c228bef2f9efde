#include "candidate_warm_up.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "cuda_check.hpp"
#include "internal_stream.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

struct FreeDevice {
  void operator()(float* p) const { (void)cudaFree(p); }
};
using DeviceFloats = std::unique_ptr<float, FreeDevice>;

// `rows` rows of `ld` floats, zeroed, and a few floats more: the pointer handed on is moved by
// the problem's alignment class so that it is aligned as the problem's were.
DeviceFloats zeroed(std::int64_t rows, std::int64_t ld, cudaStream_t stream) {
  const std::size_t bytes = (static_cast<std::size_t>(rows * ld) + 4) * sizeof(float);
  float* p = nullptr;
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&p), bytes), "cudaMalloc of a warm-up buffer");
  DeviceFloats owned(p);
  check_cuda(cudaMemsetAsync(p, 0, bytes, stream), "cudaMemsetAsync of a warm-up buffer");
  return owned;
}

}  // namespace

void warm_up_candidate(const DeviceInfo& device, const Problem& problem,
                       const PreparedCandidate& candidate) {
  int current = -1;
  check_cuda(cudaGetDevice(&current), "cudaGetDevice before a candidate's warm-up run");
  if (current != device.ordinal)
    throw Error(ErrorKind::internal, "tilemm: a candidate's warm-up run on device " +
                                         std::to_string(device.ordinal) + " while device " +
                                         std::to_string(current) + " is current");
  const InternalStream stream(device.ordinal);
  const DeviceFloats A = zeroed(problem.M, problem.lda, stream.get());
  const DeviceFloats B = zeroed(problem.K, problem.ldb, stream.get());
  const DeviceFloats C = zeroed(problem.M, problem.ldc, stream.get());
  // Pointers aligned to exactly the problem's class (cudaMalloc's are 256-byte aligned).
  const std::int64_t shift = problem.alignment < 4 ? problem.alignment : 0;
  GemmArgs args;
  args.M = problem.M;
  args.N = problem.N;
  args.K = problem.K;
  args.A = A.get() + shift;
  args.lda = problem.lda;
  args.B = B.get() + shift;
  args.ldb = problem.ldb;
  args.C = C.get() + shift;
  args.ldc = problem.ldc;
  candidate.enqueue(args, stream.get());
  check_cuda(cudaStreamSynchronize(stream.get()),
             "cudaStreamSynchronize after a candidate's warm-up run");
}

}  // namespace tilemm::detail
