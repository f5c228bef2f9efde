// Opening one of the CUDA toolkit's libraries at run time (cuBLASLt, cuBLAS): libtilemm links none
// of them, so that it starts on machines without them (or a GPU, or a driver), where the
// candidates they would bring are simply absent.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace tilemm::detail {

// The first of `names` that loads, each tried by the loader's search and then in the toolkit's
// library folders ($CUDA_HOME, $CUDA_PATH, the build's toolkit, /usr/local/cuda), opened
// RTLD_LOCAL. nullptr where none loads, with `why` the first failure; `path` is what loaded.
void* open_toolkit_library(std::initializer_list<const char*> names, std::string& path,
                           std::string& why);

// Resolves `symbol` into `out`; false, with `why` naming the first symbol missing, where it lacks it.
template <class F>
bool resolve_symbol(void* library, const char* symbol, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(library, symbol));
  if (out == nullptr && why.empty()) why = std::string("it lacks ") + symbol;
  return out != nullptr;
}

}  // namespace tilemm::detail
