#include "cublaslt_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "cuda_check.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

// The folders a toolkit keeps its libraries in, in the order tried after the loader's own search.
std::vector<std::string> toolkit_library_dirs() {
  std::vector<std::string> dirs;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(variable); root != nullptr && *root != '\0')
      dirs.push_back(std::string(root) + "/lib64");
#ifdef TILEMM_CUDA_LIBRARY_DIR
  dirs.push_back(TILEMM_CUDA_LIBRARY_DIR);
#endif
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

void* open_library(std::string& path, std::string& why) {
  std::vector<std::string> tries;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so"}) {
    tries.push_back(name);
    for (const auto& dir : toolkit_library_dirs()) tries.push_back(dir + "/" + name);
  }
  for (const auto& candidate : tries) {
    if (void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = candidate;
      return handle;
    }
    if (why.empty()) why = dlerror();
  }
  return nullptr;
}

template <class F>
bool resolve(void* library, const char* symbol, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(library, symbol));
  if (out == nullptr && why.empty()) why = std::string("it lacks ") + symbol;
  return out != nullptr;
}

const CublasLt* load() {
  std::string path, why;
  void* library = open_library(path, why);
  if (library == nullptr) {
    log(LogLevel::info, "vendor candidates are absent: cuBLASLt could not be loaded (" + why + ")");
    return nullptr;
  }
  auto* lt = new CublasLt();  // kept with the library for the life of the process
  bool ok = true;
  ok &= resolve(library, "cublasLtGetVersion", lt->get_version, why);
  ok &= resolve(library, "cublasLtCreate", lt->create, why);
  ok &= resolve(library, "cublasLtMatmulDescInit_internal", lt->desc_init, why);
  ok &= resolve(library, "cublasLtMatmulDescSetAttribute", lt->desc_set, why);
  ok &= resolve(library, "cublasLtMatrixLayoutInit_internal", lt->layout_init, why);
  ok &= resolve(library, "cublasLtMatmulPreferenceInit_internal", lt->preference_init, why);
  ok &= resolve(library, "cublasLtMatmulPreferenceSetAttribute", lt->preference_set, why);
  ok &= resolve(library, "cublasLtMatmulAlgoGetHeuristic", lt->get_heuristic, why);
  ok &= resolve(library, "cublasLtMatmulAlgoInit", lt->algo_init, why);
  ok &= resolve(library, "cublasLtMatmulAlgoCheck", lt->algo_check, why);
  ok &= resolve(library, "cublasLtMatmulAlgoConfigSetAttribute", lt->config_set, why);
  ok &= resolve(library, "cublasLtMatmulAlgoConfigGetAttribute", lt->config_get, why);
  ok &= resolve(library, "cublasLtMatmul", lt->matmul, why);
  if (!ok) {
    log(LogLevel::info, "vendor candidates are absent: " + path + " is not usable (" + why + ")");
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
  static const CublasLt* const lt = load();
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
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = handles->find(device); it != handles->end()) return it->second;
  int current = 0;
  TILEMM_CUDA(cudaGetDevice(&current));
  if (current != device) TILEMM_CUDA(cudaSetDevice(device));
  cublasLtHandle_t handle = nullptr;
  const cublasStatus_t status = lt.create(&handle);
  if (current != device) TILEMM_CUDA(cudaSetDevice(current));
  check_cublaslt(status, "cublasLtCreate");
  (*handles)[device] = handle;
  return handle;
}

}  // namespace tilemm::detail
