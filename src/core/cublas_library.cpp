#include "cublas_library.hpp"

#include <atomic>

#include "log.hpp"
#include "no_wait.hpp"
#include "tilemm/error.hpp"
#include "toolkit_library.hpp"

namespace tilemm::detail {
namespace {

const Cublas* load() {
  std::string path, why;
  void* library = open_toolkit_library({"libcublas.so.13", "libcublas.so"}, path, why);
  if (library == nullptr) {
    log(LogLevel::info, "cuBLAS candidates are absent: cuBLAS could not be loaded (" + why + ")");
    return nullptr;
  }
  auto* blas = new Cublas();  // kept with the library for the life of the process
  bool ok = true;
  ok &= resolve_symbol(library, "cublasGetProperty", blas->get_property, why);
  ok &= resolve_symbol(library, "cublasCreate_v2", blas->create, why);
  ok &= resolve_symbol(library, "cublasSetStream_v2", blas->set_stream, why);
  ok &= resolve_symbol(library, "cublasSetWorkspace_v2", blas->set_workspace, why);
  ok &= resolve_symbol(library, "cublasSetMathMode", blas->set_math_mode, why);
  ok &= resolve_symbol(library, "cublasSgemm_v2", blas->sgemm, why);
  int major = 0, minor = 0, patch = 0;
  if (ok && (blas->get_property(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
             blas->get_property(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
             blas->get_property(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)) {
    ok = false;
    why = "cublasGetProperty failed";
  }
  if (!ok) {
    log(LogLevel::info, "cuBLAS candidates are absent: " + path + " is not usable (" + why + ")");
    delete blas;
    dlclose(library);
    return nullptr;
  }
  blas->version = major * 10000 + minor * 100 + patch;
  blas->path = path;
  log(LogLevel::debug, "cuBLAS " + std::to_string(blas->version) + " loaded from " + path);
  return blas;
}

}  // namespace

const Cublas* cublas() {
  // As cublaslt(): a thread that must not wait neither loads it nor waits for its loading.
  static std::atomic<bool> looked_for{false};
  if (!looked_for.load(std::memory_order_acquire)) refuse_wait("cuBLAS to load");
  static const Cublas* const blas = timed_step(
      [](const Cublas* found) { return std::string(found ? "cuBLAS loaded" : "cuBLAS looked for"); },
      load);
  looked_for.store(true, std::memory_order_release);
  return blas;
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::internal, std::string("tilemm: ") + call + " failed: cuBLAS status " +
                                         std::to_string(static_cast<int>(status)));
}

}  // namespace tilemm::detail
