#include "cuda_check.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "stream_check.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {

void run_variant(const Variant& v, const GemmArgs& args, cudaStream_t stream) {
  validate(args);
  if (args.M == 0 || args.N == 0) return;  // nothing to write, as in BLAS
  const DeviceInfo& device = current_device();
  detail::check_stream(stream, device);
  // The caller chose the variant, and with it the precision it computes at.
  Problem problem = args.problem();
  problem.precision = precision_of(v);
  const Verdict verdict = can_run(v, device, problem);
  if (!verdict)
    throw InvalidArgument("variant", "'" + variant_name(v) + "' cannot run this problem: " +
                                         verdict.reason);
  detail::launch(detail::kernel_for(device, v), args, stream);
}

}  // namespace tilemm
