// The padded family: the float4 warptile kernel (kernel_templates/warptile.cu, ALIGNED_COPIES)
// on copies of A and B whose rows are rounded up to 4 floats, made by the module's own
// <name>_copy kernel, so that odd leading dimensions (N = 4097, say), which allow only the scalar
// warptile kernels, get float4 loads too; C is written in place with scalar stores. Its pruning
// hint keeps it out of aligned problems; on the others it is timed against the scalar kernels
// (docs/kernels.md). Its tiles are those with BN 128, which win at N >= 2048.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "family_launch.hpp"
#include "family_registry.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

// A (M x aligned_ld(K)), then B (K x aligned_ld(N)): every row starts 16-byte aligned.
std::size_t copies_bytes(const Variant&, const Problem& p) {
  const auto M = static_cast<std::size_t>(p.M);
  const auto K = static_cast<std::size_t>(p.K);
  return (M * static_cast<std::size_t>(aligned_ld(p.K)) +
          K * static_cast<std::size_t>(aligned_ld(p.N))) *
         sizeof(float);
}

std::vector<std::string> copy_kernel(const Variant&) { return {"_copy"}; }

// dst (rows x dst_ld, dst_ld a multiple of 4) = src (rows x cols, pitch src_ld), the columns
// beyond `cols` zero, with <name>_copy. Must match that kernel in the template: 256 threads, one
// float each, the grid's rows striding over rows.
void enqueue_copy(cudaKernel_t copy, float* dst, std::int64_t dst_ld, const float* src,
                  std::int64_t src_ld, std::int64_t rows, std::int64_t cols,
                  cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  constexpr std::int64_t kCopyThreads = 256;
  constexpr std::int64_t kMaxGridRows = 65535;  // the grid's y limit
  int r = static_cast<int>(rows), c = static_cast<int>(cols);
  long long ls = src_ld, ld = dst_ld;
  void* params[] = {&r, &c, &src, &ls, &dst, &ld};
  LaunchGeometry g;
  g.grid[0] = static_cast<unsigned>((dst_ld + kCopyThreads - 1) / kCopyThreads);
  g.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(rows, kMaxGridRows));
  g.block[0] = static_cast<unsigned>(kCopyThreads);
  launch_kernel(copy, g, params, stream);
}

// The copies of A and B into the workspace (layout as in copies_bytes), then the GEMM kernel on
// them, writing the caller's C.
void enqueue_on_aligned_copies(const LaunchRequest& r) {
  const GemmArgs& args = r.args;
  const std::int64_t k4 = aligned_ld(args.K), n4 = aligned_ld(args.N);
  float* a = r.workspace;
  float* b = a + args.M * k4;
  const cudaKernel_t copy = r.kernels.extra_kernel("_copy");
  enqueue_copy(copy, a, k4, args.A, args.lda, args.M, args.K, r.stream);
  enqueue_copy(copy, b, n4, args.B, args.ldb, args.K, args.N, r.stream);
  GemmArgs run = args;
  run.A = a;
  run.lda = k4;
  run.B = b;
  run.ldb = n4;
  launch_gemm_kernel(r.kernels.gemm, warptile_geometry(r.variant, r.problem), run, r.stream);
}

std::string aligned_problem_hint(const Variant&, const DeviceInfo&, const Problem& p) {
  if (p.alignment >= 4) return "the problem is aligned: the float4 kernel runs without the copies";
  return {};
}

}  // namespace

Family padded_family() {
  Family f;
  f.name = "padded";
  f.template_file = "warptile.cu";
  f.params = {{"bm", "BM", {64, 128, 256}},
              {"bn", "BN", {128}},
              {"bk", "BK", {16}},
              {"wm", "WM", {32, 64}},
              {"wn", "WN", {32, 64}},
              {"tm", "TM", {4, 8}},
              {"tn", "TN", {4}},
              {"v", "VEC", {4}}};
  f.check_params = check_warptile_tiles;
  f.geometry = warptile_geometry;
  f.shared_bytes = warptile_shared_bytes;
  // The float4 loads read the aligned copies, and C is stored scalar: any alignment.
  f.required_alignment = any_alignment;
  f.workspace_bytes = copies_bytes;
  f.extra_definitions = {"-DALIGNED_COPIES=1"};
  f.extra_kernels = copy_kernel;
  f.enqueue = enqueue_on_aligned_copies;
  f.pruning_hint = aligned_problem_hint;
  return f;
}

}  // namespace tilemm::detail
