#include "candidate_warm_up.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cuda_check.hpp"
#include "internal_stream.hpp"
#include "launch.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

using Buffer = std::unique_ptr<StreamWorkspace>;

// `rows` rows of `ld` floats from tilemm's pool on `stream`, zeroed there, and a few floats more:
// the pointer handed on is moved by the problem's alignment class so that it is aligned as the
// problem's were.
Buffer zeroed(const DeviceInfo& device, std::int64_t rows, std::int64_t ld, cudaStream_t stream) {
  const std::size_t bytes = (static_cast<std::size_t>(rows * ld) + 4) * sizeof(float);
  auto buffer = std::make_unique<StreamWorkspace>(bytes, device.ordinal, stream);
  check_cuda(cudaMemsetAsync(buffer->floats(), 0, bytes, stream),
             "cudaMemsetAsync of a warm-up buffer");
  return buffer;
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
  const InternalStream stream(device.ordinal);  // before the buffers, which are freed on it
  const Buffer A = zeroed(device, problem.M, problem.lda, stream.get());
  const Buffer B = zeroed(device, problem.K, problem.ldb, stream.get());
  const Buffer C = zeroed(device, problem.M, problem.ldc, stream.get());
  // Pointers aligned to exactly the problem's class (the pool's are 256-byte aligned).
  const std::int64_t shift = problem.alignment < 4 ? problem.alignment : 0;
  GemmArgs args;
  args.M = problem.M;
  args.N = problem.N;
  args.K = problem.K;
  args.A = A->floats() + shift;
  args.lda = problem.lda;
  args.B = B->floats() + shift;
  args.ldb = problem.ldb;
  args.C = C->floats() + shift;
  args.ldc = problem.ldc;
  candidate.enqueue(args, stream.get());
  check_cuda(cudaStreamSynchronize(stream.get()),
             "cudaStreamSynchronize after a candidate's warm-up run");
  A->release();
  B->release();
  C->release();
}

}  // namespace tilemm::detail
