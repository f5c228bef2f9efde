// A kernel family as a strategy object: one template plus the answers to every question the
// library asks about its variants. Names, the space and can_run (variant.cpp), the compile
// options (nvrtc_compiler.cpp), the kernels to load (kernel_library.cpp), the launches
// (launch.cpp) and the tuner's pruning (tuner.cpp) all ask a Family and never test which family
// it is. A family is built field by field in its own file (src/core/families/<name>.cpp), which
// registers it (TILEMM_FAMILY, family_registry.hpp):
//
//   Family f;
//   f.name = "tiled";
//   f.template_file = "tiled.cu";
//   f.params = {{"t", "TILE", {8, 16, 32}}, {"p", "PAD", {0, 1}}};
//   f.geometry = tiled_geometry;
//   f.shared_bytes = tiled_shared_bytes;
//
// Every field left out keeps the default written next to it; geometry and shared_bytes have
// none (the registry refuses a family without them, see family_registry.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tilemm/device.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

struct ParamSpec {
  std::string key;          // in the name: "t" in "tiled_t32"
  std::string macro;        // -D macro of the template: "TILE"
  std::vector<int> values;  // the space
};

struct LaunchGeometry {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::size_t dynamic_shared_bytes = 0;
  std::uint64_t grid_x64 = 1, grid_y64 = 1, grid_z64 = 1;  // before narrowing, for can_run
};

// Tiles of `tile` (> 0) that cover `extent` (>= 0): a grid dimension before narrowing.
inline std::uint64_t ceil_div(std::int64_t extent, std::int64_t tile) {
  return static_cast<std::uint64_t>((extent + tile - 1) / tile);
}

// One block of bx x by threads per tile_m x tile_n tile of an M x N C: grid x over N, y over M.
LaunchGeometry grid_over_c(std::int64_t M, std::int64_t N, int tile_m, int tile_n, unsigned bx,
                           unsigned by);

// The kernels of one loaded module: the GEMM kernel, whose symbol is the variant's name, and the
// extra kernels its family lists (Family::extra_kernels), by the suffix of their symbol.
struct ModuleKernels {
  cudaKernel_t gemm = nullptr;
  std::vector<std::pair<std::string, cudaKernel_t>> extra;  // {"_reduce", <name>_reduce}, ...
  // The extra kernel <name><suffix>. Throws tilemm::Error (internal) when the family did not
  // list `suffix` for this variant, so it was never loaded. No CUDA call.
  cudaKernel_t extra_kernel(std::string_view suffix) const;
};

struct Family;

// One call of a loaded variant, as a family's enqueue receives it.
struct LaunchRequest {
  const Family& family;
  const Variant& variant;
  const ModuleKernels& kernels;
  const GemmArgs& args;    // validated: M and N > 0, and can_run passed for `problem`
  const Problem& problem;  // args.problem()
  const DeviceInfo& device;  // the device the kernels were loaded on
  // family.workspace_bytes(variant, problem, device) bytes of device memory, ordered on `stream`
  // and aligned for float4, or nullptr when that is 0. Freed (stream-ordered) after enqueue
  // returns.
  float* workspace;
  cudaStream_t stream;
};

// The defaults of Family's fields.
std::string any_combination(const Variant&);                      // check_params: always valid
int any_alignment(const Variant&);                                // required_alignment: 1
std::size_t no_workspace(const Variant&, const Problem&, const DeviceInfo&);  // workspace_bytes: 0
std::vector<std::string> no_extra_kernels(const Variant&);        // extra_kernels: none
void enqueue_gemm(const LaunchRequest& request);                  // enqueue: see below
std::string might_win(const Variant&, const DeviceInfo&, const Problem&);  // pruning_hint: ""
std::string any_problem(const Variant&, const Problem&);          // check_problem: every shape
Precision computes_fp32(const Variant&);                          // precision: highest
// precision of the TF32 tensor-core families, by their `sp` parameter: 3 (3xTF32) is high, 1
// (one TF32 pass) is medium.
Precision computes_tf32_split(const Variant&);

struct Family {
  // The first part of every variant name; no '_' (names are split on it).
  std::string name;
  // The template in kernel_templates/ (or one given to register_extra_family).
  std::string template_file;
  // One {key, macro, values} per parameter, in name order; no key contains '_'. The space is the
  // product of the value lists, in odometer order (the first parameter varies slowest).
  std::vector<ParamSpec> params;

  // Why this combination of values is not a valid kernel; empty when it is. One rule per
  // static_assert of the template, with its message, so that the space never holds a variant
  // that fails to compile.
  std::string (*check_params)(const Variant&) = any_combination;
  // Lowest compute capability (major * 10 + minor) the template compiles and runs on; 0: any.
  // can_run() refuses older devices, and the space compiled for an older architecture skips it.
  int min_compute_capability = 0;
  // The family's kernels use features of exactly one architecture (wgmma: sm_90a), so its
  // variants are compiled for "sm_XYa" (XY: min_compute_capability) and run at that compute
  // capability alone: can_run() refuses every other device, newer ones too, and the space
  // compiled for another architecture skips them. The CUBIN is still filed under the device's
  // "sm_XY" (CompiledVariant::arch, the cache's key), the architecture it loads on.
  bool arch_specific = false;
  // Where one variant needs more than the family's minimum (the skinny families' cluster
  // variants need 9.0, their unsplit ones run anywhere): that variant's; nullptr: the family's.
  int (*variant_min_compute_capability)(const Variant&) = nullptr;
  // Why `problem` lies outside the shapes this variant serves (gemvm only M <= 16, say); empty
  // when inside. can_run() asks it, so the tuner never compiles or times such a pair.
  std::string (*check_problem)(const Variant&, const Problem&) = any_problem;

  // The precision a variant computes at (tilemm/precision.hpp): which problems it may serve and
  // which tuning spaces hold it. The FP32 FFMA families keep the default, highest.
  Precision (*precision)(const Variant&) = computes_fp32;

  // Grid, block and dynamic shared memory of the GEMM kernel (with the 64-bit grid sizes that
  // can_run compares with the device's limits, and that the tuner counts blocks by). Required.
  LaunchGeometry (*geometry)(const Variant&, const Problem&) = nullptr;
  // A family whose kernel runs persistent blocks, all resident at once, each taking tiles of the
  // geometry's grid in turn: the blocks one call launches on `sm_count` SMs. nullptr: the launch is
  // the geometry's grid.
  std::uint64_t (*persistent_blocks)(const Variant&, const Problem&, int sm_count) = nullptr;
  // Static plus dynamic shared memory per block of the GEMM kernel, bytes. Required. Above the
  // default 48 KiB the loader opts the kernel in.
  std::size_t (*shared_bytes)(const Variant&) = nullptr;
  // Alignment class (1, 2 or 4 floats) a problem needs for this variant.
  int (*required_alignment)(const Variant&) = any_alignment;
  // Device memory one call on `device` needs besides A, B and C, bytes; launch() takes it from
  // the stream's pool and hands it to enqueue. can_run refuses a variant whose workspace exceeds
  // 1 GiB.
  std::size_t (*workspace_bytes)(const Variant&, const Problem&,
                                 const DeviceInfo& device) = no_workspace;

  // -D options every variant of the family is compiled with, after TILEMM_KERNEL_NAME and the
  // parameters' macros.
  std::vector<std::string> extra_definitions;
  // The symbol suffixes of the module's kernels besides the GEMM kernel ("_reduce" for
  // <name>_reduce), which the loader looks up and enqueue finds in ModuleKernels.
  std::vector<std::string> (*extra_kernels)(const Variant&) = no_extra_kernels;
  // Enqueues everything one call runs, on request.stream, without synchronizing. The default
  // launches the GEMM kernel on the caller's A, B and C with family.geometry.
  void (*enqueue)(const LaunchRequest&) = enqueue_gemm;

  // Why the tuner need not compile or time this variant for `problem` on `device` (it cannot
  // win there), empty when it might win. Cheap: no CUDA call, no compile.
  std::string (*pruning_hint)(const Variant&, const DeviceInfo&, const Problem&) = might_win;
};

}  // namespace tilemm::detail
