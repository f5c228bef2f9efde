#include "cublaslt_library.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "device_current.hpp"
#include "log.hpp"
#include "no_wait.hpp"
#include "tilemm/error.hpp"
#include "toolkit_library.hpp"

namespace tilemm::detail {
namespace {

const CublasLt* load() {
  std::string path, why;
  void* library = open_toolkit_library({"libcublasLt.so.13", "libcublasLt.so"}, path, why);
  if (library == nullptr) {
    log(LogLevel::info, "cuBLASLt candidates are absent: cuBLASLt could not be loaded (" + why + ")");
    return nullptr;
  }
  auto* lt = new CublasLt();  // kept with the library for the life of the process
  bool ok = true;
  ok &= resolve_symbol(library, "cublasLtGetVersion", lt->get_version, why);
  ok &= resolve_symbol(library, "cublasLtCreate", lt->create, why);
  ok &= resolve_symbol(library, "cublasLtMatmulDescInit_internal", lt->desc_init, why);
  ok &= resolve_symbol(library, "cublasLtMatmulDescSetAttribute", lt->desc_set, why);
  ok &= resolve_symbol(library, "cublasLtMatrixLayoutInit_internal", lt->layout_init, why);
  ok &= resolve_symbol(library, "cublasLtMatmulPreferenceInit_internal", lt->preference_init, why);
  ok &= resolve_symbol(library, "cublasLtMatmulPreferenceSetAttribute", lt->preference_set, why);
  ok &= resolve_symbol(library, "cublasLtMatmulAlgoGetHeuristic", lt->get_heuristic, why);
  ok &= resolve_symbol(library, "cublasLtMatmulAlgoInit", lt->algo_init, why);
  ok &= resolve_symbol(library, "cublasLtMatmulAlgoCheck", lt->algo_check, why);
  ok &= resolve_symbol(library, "cublasLtMatmulAlgoConfigSetAttribute", lt->config_set, why);
  ok &= resolve_symbol(library, "cublasLtMatmulAlgoConfigGetAttribute", lt->config_get, why);
  ok &= resolve_symbol(library, "cublasLtMatmul", lt->matmul, why);
  if (!ok) {
    log(LogLevel::info, "cuBLASLt candidates are absent: " + path + " is not usable (" + why + ")");
    delete lt;
    dlclose(library);
    return nullptr;
  }
  lt->version = lt->get_version();
  lt->path = path;
  log(LogLevel::debug, "cuBLASLt " + std::to_string(lt->version) + " loaded from " + path);
  return lt;
}

}  // namespace

const CublasLt* cublaslt() {
  // Set once the library has been looked for: a thread that must not wait neither loads it nor
  // waits for another thread loading it.
  static std::atomic<bool> looked_for{false};
  if (!looked_for.load(std::memory_order_acquire)) refuse_wait("cuBLASLt to load");
  static const CublasLt* const lt = timed_step(
      [](const CublasLt* found) {
        return std::string(found ? "cuBLASLt loaded" : "cuBLASLt looked for");
      },
      load);
  looked_for.store(true, std::memory_order_release);
  return lt;
}

void check_cublaslt(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(ErrorKind::internal, std::string("tilemm: ") + call +
                                         " failed: cuBLASLt status " +
                                         std::to_string(static_cast<int>(status)));
}

cublasLtHandle_t cublaslt_handle(const CublasLt& lt, int device) {
  static std::mutex mutex;
  static auto* handles = new std::map<int, cublasLtHandle_t>();  // never destroyed, like kernels
  const std::string what = "a cuBLASLt handle on device " + std::to_string(device);
  const auto lock = lock_unless_refused(mutex, what);
  if (const auto it = handles->find(device); it != handles->end()) return it->second;
  refuse_wait(what);
  cublasLtHandle_t handle = nullptr;
  const cublasStatus_t status = with_device_current(device, [&] { return lt.create(&handle); });
  check_cublaslt(status, "cublasLtCreate");
  (*handles)[device] = handle;
  return handle;
}

}  // namespace tilemm::detail
