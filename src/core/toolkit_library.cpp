#include "toolkit_library.hpp"

#include <cstdlib>
#include <vector>

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

}  // namespace

void* open_toolkit_library(std::initializer_list<const char*> names, std::string& path,
                           std::string& why) {
  std::vector<std::string> tries;
  for (const char* name : names) {
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

}  // namespace tilemm::detail
