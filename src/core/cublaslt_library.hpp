// cuBLASLt, loaded at run time: libtilemm never links it, so it starts on machines without cuBLAS
// (or a GPU, or a driver), where vendor candidates are simply absent. cublasLt.h is included for
// its types only; every call goes through a pointer resolved with dlsym and checked.
#pragma once

#include <cublasLt.h>

#include <cstddef>
#include <string>

namespace tilemm::detail {

struct CublasLt {
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtMatmulDescInit_internal) desc_init = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutInit_internal) layout_init = nullptr;
  decltype(&cublasLtMatmulPreferenceInit_internal) preference_init = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) get_heuristic = nullptr;
  decltype(&cublasLtMatmulAlgoInit) algo_init = nullptr;
  decltype(&cublasLtMatmulAlgoCheck) algo_check = nullptr;
  decltype(&cublasLtMatmulAlgoConfigSetAttribute) config_set = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) config_get = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
  std::size_t version = 0;  // cublasLtGetVersion(): 130100 for 13.1.0
  std::string path;         // the file it was loaded from
};

// The loaded library, or nullptr where it is unavailable (not found, or a symbol missing; whether
// vendor candidates are wanted at all, TILEMM_VENDOR, is the callers' question). The first call
// tries libcublasLt.so.13, then libcublasLt.so, each by the loader's search and then
// in the toolkit's library folder ($CUDA_HOME, $CUDA_PATH, the build's toolkit, /usr/local/cuda);
// where none loads, one info line says so and why. Thread-safe; loaded once per process.
const CublasLt* cublaslt();

// The handle of `device` (created on first use with that device current), kept for the process.
// Throws tilemm::Error naming cublasLtCreate and its status.
cublasLtHandle_t cublaslt_handle(const CublasLt& lt, int device);

// Throws tilemm::Error "tilemm: <call> failed: cuBLASLt status <n>" unless `status` is success.
void check_cublaslt(cublasStatus_t status, const char* call);

}  // namespace tilemm::detail
