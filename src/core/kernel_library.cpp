#include "kernel_library.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "launch.hpp"
#include "nvrtc_compiler.hpp"

namespace tilemm::detail {
namespace {

// Owns a cudaLibrary_t.
class Library {
 public:
  explicit Library(const std::vector<char>& image) {
    const cudaError_t status =
        cudaLibraryLoadData(&library_, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (status != cudaSuccess) {
      // A rejected image (a damaged cached CUBIN, which the caller recompiles) is not sticky:
      // leave no error behind for the application's next cudaGetLastError().
      (void)cudaGetLastError();
      throw_cuda_error(status, "cudaLibraryLoadData");
    }
  }
  ~Library() {
    if (library_ != nullptr) (void)cudaLibraryUnload(library_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  cudaLibrary_t get() const { return library_; }

 private:
  cudaLibrary_t library_ = nullptr;
};

struct Slot {
  std::mutex mutex;  // serializes compile + load of this one key
  std::unique_ptr<Library> library;
  std::unique_ptr<LoadedKernel> loaded;
};

class Registry {
 public:
  std::shared_ptr<Slot> slot(int device, const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& s = slots_[{device, name}];
    if (!s) s = std::make_shared<Slot>();
    return s;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, std::string>, std::shared_ptr<Slot>> slots_;
};

// Never destroyed: unloading libraries while the CUDA runtime tears itself down at exit fails,
// and the driver frees them with the context anyway.
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

void install(Slot& slot, const DeviceInfo& device, const Variant& v,
             const std::vector<char>& cubin) {
  const std::string name = variant_name(v);
  auto library = std::make_unique<Library>(cubin);
  auto loaded = std::make_unique<LoadedKernel>();
  loaded->variant = v;
  loaded->family = &find_family(v.family);
  loaded->device = device.ordinal;
  auto get_kernel = [&](cudaKernel_t* out, const std::string& symbol) {
    const cudaError_t status = cudaLibraryGetKernel(out, library->get(), symbol.c_str());
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky either, see Library
      throw Error(ErrorKind::cuda, "tilemm: cudaLibraryGetKernel('" + symbol +
                                       "') failed: " + cudaGetErrorString(status) +
                                       " (the CUBIN does not hold this variant's kernel)");
    }
  };
  get_kernel(&loaded->kernels.gemm, name);
  for (const std::string& suffix : loaded->family->extra_kernels(v)) {
    cudaKernel_t extra = nullptr;
    get_kernel(&extra, name + suffix);
    loaded->kernels.extra.emplace_back(suffix, extra);
  }
  // Kernels that need more than the default 48 KiB of shared memory must opt in per device.
  const std::size_t shared = loaded->family->shared_bytes(v);
  if (shared > 48 * 1024)
    TILEMM_CUDA(cudaKernelSetAttributeForDevice(loaded->kernels.gemm,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(shared), device.ordinal));
  prepare_workspace_pool(device.ordinal);
  slot.library = std::move(library);
  slot.loaded = std::move(loaded);
}

}  // namespace

const LoadedKernel* find_loaded(const DeviceInfo& device, const Variant& v) {
  auto slot = registry().slot(device.ordinal, variant_name(v));
  std::lock_guard<std::mutex> lock(slot->mutex);
  return slot->loaded.get();
}

const LoadedKernel& load_kernel(const DeviceInfo& device, const Variant& v,
                                const std::vector<char>& cubin) {
  auto slot = registry().slot(device.ordinal, variant_name(v));
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (!slot->loaded) install(*slot, device, v, cubin);
  return *slot->loaded;
}

const LoadedKernel& kernel_for(const DeviceInfo& device, const Variant& v) {
  auto slot = registry().slot(device.ordinal, variant_name(v));
  std::lock_guard<std::mutex> lock(slot->mutex);
  if (!slot->loaded) install(*slot, device, v, compile_variant(v, device.arch()).cubin);
  return *slot->loaded;
}

}  // namespace tilemm::detail
