#include "aligned_copies.hpp"

#include <algorithm>
#include <cstdint>

#include "family_launch.hpp"
#include "family_registry.hpp"
#include "tilemm/device.hpp"

namespace tilemm::detail {

std::int64_t copy_ld(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 31) / 32 * 32; }

std::size_t aligned_copies_bytes(const Problem& p) {
  const auto M = static_cast<std::size_t>(p.M);
  const auto K = static_cast<std::size_t>(p.K);
  return (M * static_cast<std::size_t>(copy_ld(p.K)) + K * static_cast<std::size_t>(copy_ld(p.N))) *
         sizeof(float);
}

namespace {

std::vector<std::string> copy_kernel(const Variant&) { return {"_copy"}; }

std::size_t copies_bytes(const Variant&, const Problem& p, const DeviceInfo&) {
  return aligned_copies_bytes(p);
}

std::string aligned_problem_hint(const Variant&, const DeviceInfo&, const Problem& p) {
  if (p.alignment >= 4) return "the problem is aligned: the kernels run without the copies";
  return {};
}

// dst (rows x dst_ld, dst_ld = copy_ld(cols)) = src (rows x cols, pitch src_ld), the columns
// beyond `cols` zero, with <name>_copy. Must match that kernel in the templates: 256 threads, one
// column each, the grid's x over the columns and its y striding over the rows. A block per row
// would copy 1 KiB and exit, and the GPU would spend the copy starting blocks (a block's life is
// about one load's latency): the grid is a full load of blocks instead (8 of 256 threads per SM),
// each thread walking rows.
void enqueue_copy(cudaKernel_t copy, float* dst, std::int64_t dst_ld, const float* src,
                  std::int64_t src_ld, std::int64_t rows, std::int64_t cols, int sm_count,
                  cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  constexpr std::int64_t kCopyThreads = 256;
  constexpr std::int64_t kBlocksPerSm = 2048 / kCopyThreads;
  constexpr std::int64_t kMaxGridRows = 65535;  // the grid's y limit
  int r = static_cast<int>(rows), c = static_cast<int>(cols);
  long long ls = src_ld, ld = dst_ld;
  void* params[] = {&r, &c, &src, &ls, &dst, &ld};
  LaunchGeometry g;
  const std::int64_t column_blocks = (dst_ld + kCopyThreads - 1) / kCopyThreads;
  const std::int64_t wanted = kBlocksPerSm * sm_count;
  g.grid[0] = static_cast<unsigned>(column_blocks);
  g.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(
      {rows, kMaxGridRows, std::max<std::int64_t>(1, (wanted + column_blocks - 1) / column_blocks)}));
  g.block[0] = static_cast<unsigned>(kCopyThreads);
  launch_kernel(copy, g, params, stream);
}

}  // namespace

GemmArgs enqueue_aligned_copies(const LaunchRequest& r) {
  const GemmArgs& args = r.args;
  const std::int64_t lda = copy_ld(args.K), ldb = copy_ld(args.N);
  float* a = r.workspace;
  float* b = a + args.M * lda;
  const cudaKernel_t copy = r.kernels.extra_kernel("_copy");
  enqueue_copy(copy, a, lda, args.A, args.lda, args.M, args.K, r.device.sm_count, r.stream);
  enqueue_copy(copy, b, ldb, args.B, args.ldb, args.K, args.N, r.device.sm_count, r.stream);
  GemmArgs run = args;
  run.A = a;
  run.lda = lda;
  run.B = b;
  run.ldb = ldb;
  return run;
}

void run_on_aligned_copies(Family& f) {
  f.required_alignment = any_alignment;
  f.workspace_bytes = copies_bytes;
  f.extra_definitions.push_back("-DALIGNED_COPIES=1");
  f.extra_kernels = copy_kernel;
  f.pruning_hint = aligned_problem_hint;
}

}  // namespace tilemm::detail
