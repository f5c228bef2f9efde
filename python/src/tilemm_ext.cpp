// tilemm._ext: the nanobind binding of tilemm's public C++ API. It takes raw device pointers,
// element strides and stream handles; reading them out of torch, CuPy or DLPack arrays is the
// Python package's job (python/tilemm/_arrays.py), which keeps this file free of any framework.
//
// The call path of matmul() is one function with positional arguments (`gemm`): nanobind parses
// those without building keyword dictionaries, and the GIL is released only around the library
// call, so a warm call costs a few hundred nanoseconds here on top of the library's own dispatch.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>

#include "device_guard.hpp"
#include "python_errors.hpp"
#include "tilemm/autotune.hpp"
#include "tilemm/blas.hpp"
#include "tilemm/precision.hpp"

namespace nb = nanobind;

namespace tilemm::python {
namespace {

Precision precision_from_int(int code) {
  if (code < 0 || code > 2)
    throw InvalidArgument("precision", "must be 0 (highest), 1 (high) or 2 (medium), got " +
                                           std::to_string(code));
  return static_cast<Precision>(code);
}

// One Options per precision, built once: the policy and budget come from the environment, read
// once per process by the library, so per-call construction would only repeat that lookup.
const Options& options_for(Precision precision) {
  static const std::array<Options, 3> all = [] {
    std::array<Options, 3> o;
    o[0].precision = Precision::highest;
    o[1].precision = Precision::high;
    o[2].precision = Precision::medium;
    return o;
  }();
  return all[static_cast<int>(precision)];
}

// C = alpha * op(A) * op(B) + beta * C for batch_count matrices (tilemm::gemm_strided_batched),
// asynchronously on `stream` of device `device`. layout 0 = row-major, 1 = column-major; op 0 =
// none, 1 = transpose. Pointers, strides and leading dimensions in elements as blas.hpp says.
void gemm_raw(int layout, int op_a, int op_b, std::int64_t M, std::int64_t N, std::int64_t K,
              float alpha, std::uintptr_t A, std::int64_t lda, std::int64_t stride_a,
              std::uintptr_t B, std::int64_t ldb, std::int64_t stride_b, float beta,
              std::uintptr_t C, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch_count,
              std::uintptr_t stream, int device, int precision) {
  const Options& options = options_for(precision_from_int(precision));
  nb::gil_scoped_release released;
  const DeviceGuard on(device);
  gemm_strided_batched(layout == 0 ? Layout::row_major : Layout::column_major,
                       op_a == 0 ? Op::none : Op::transpose, op_b == 0 ? Op::none : Op::transpose,
                       M, N, K, alpha, reinterpret_cast<const float*>(A), lda, stride_a,
                       reinterpret_cast<const float*>(B), ldb, stride_b, beta,
                       reinterpret_cast<float*>(C), ldc, stride_c, batch_count,
                       reinterpret_cast<cudaStream_t>(stream), options);
}

AutotuneResult autotune_shape(std::int64_t M, std::int64_t N, std::int64_t K, int precision,
                              bool force, int device) {
  Options options = options_for(precision_from_int(precision));
  options.force = force;
  nb::gil_scoped_release released;  // tuning takes seconds and synchronizes the device
  const DeviceGuard on(device);
  return autotune(M, N, K, options);
}

}  // namespace

void bind_arrays(nb::module_& m);  // array_binding.cpp

}  // namespace tilemm::python

NB_MODULE(_ext, m) {
  using namespace tilemm;
  using namespace tilemm::python;
  m.doc() = "tilemm's C++ library, bound for the Python package tilemm (use that, not this).";
  register_exceptions(m);

  m.def("gemm", &gemm_raw,
        "gemm(layout, op_a, op_b, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, "
        "ldc, stride_c, batch_count, stream, device, precision): tilemm::gemm_strided_batched on "
        "raw device pointers, asynchronous on `stream`.");
  m.def("autotune", &autotune_shape, nb::arg("m"), nb::arg("n"), nb::arg("k"),
        nb::arg("precision"), nb::arg("force"), nb::arg("device"),
        "tilemm::autotune for an M x N x K problem with dense leading dimensions.");
  m.def("default_precision",
        [] { return static_cast<int>(Options::precision_from_environment()); },
        "The precision TILEMM_PRECISION selects (0 highest, 1 high, 2 medium).");
  m.def("cache_path", [] { return cache_path(); }, "The SQLite cache this process uses.");
  m.def("nvrtc_compilations", [] { return nvrtc_compilations(); });
  m.def("tunings_run", [] { return tunings_run(); });
  m.attr("version") = TILEMM_VERSION;

  nb::class_<CandidateResult>(m, "Candidate", "One candidate of a tuning.")
      .def_prop_ro("name", [](const CandidateResult& c) { return c.variant; },
                   "The canonical variant name.")
      .def_prop_ro("median_ms", [](const CandidateResult& c) { return c.stats.median_ms; },
                   "Median time in milliseconds (meaningful when status is 'ok').")
      .def_prop_ro("status", [](const CandidateResult& c) { return std::string(to_string(c.status)); },
                   "ok, wrong_result, compile_error, launch_error, cannot_run or pruned.")
      .def_prop_ro("reason", [](const CandidateResult& c) { return c.reason; },
                   "Why the candidate is not ok (empty when it is).")
      .def("__repr__", [](const CandidateResult& c) {
        return "Candidate(name='" + c.variant + "', median_ms=" + std::to_string(c.stats.median_ms) +
               ", status='" + to_string(c.status) + "')";
      });

  nb::class_<AutotuneResult>(m, "AutotuneResult", "What tilemm.autotune() found for a shape.")
      .def_ro("winner", &AutotuneResult::winner, "The chosen variant (or rowsplit_h<h> plan).")
      .def_ro("median_ms", &AutotuneResult::median_ms, "The winner's median time in milliseconds.")
      .def_ro("tflops", &AutotuneResult::tflops, "The winner's TFLOP/s.")
      .def_ro("margin", &AutotuneResult::margin, "Runner-up median / winner median - 1.")
      .def_prop_ro("source", [](const AutotuneResult& r) { return std::string(to_string(r.source)); },
                   "tuned, cache, imported, remote, preloaded or fallback.")
      .def_ro("candidates", &AutotuneResult::candidates, "Every candidate, fastest first.")
      .def_ro("device_key", &AutotuneResult::device_key, "The device model the result is for.")
      .def_ro("problem_class", &AutotuneResult::problem_class, "e.g. 'a4-dense'.")
      .def_ro("tuning_seconds", &AutotuneResult::tuning_seconds,
              "Wall time of this tuning (0 when served from a cache).")
      .def("__repr__", [](const AutotuneResult& r) {
        return "AutotuneResult(winner='" + r.winner + "', median_ms=" + std::to_string(r.median_ms) +
               ", tflops=" + std::to_string(r.tflops) + ", source='" + to_string(r.source) + "')";
      });

  bind_arrays(m);
}
