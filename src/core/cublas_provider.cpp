#include "cublas_provider.hpp"

#include <climits>
#include <map>
#include <mutex>
#include <optional>

#include "cuda_check.hpp"
#include "cublas_library.hpp"
#include "device_current.hpp"
#include "launch.hpp"
#include "no_wait.hpp"
#include "stream_check.hpp"
#include "text_fields.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

cublasMath_t math_mode(int math) {
  return math == 0 ? CUBLAS_PEDANTIC_MATH : CUBLAS_TF32_TENSOR_OP_MATH;
}

// Why cublasSgemm, whose sizes and leading dimensions are int, cannot take `problem`; empty when
// it can.
std::string why_too_large(const Problem& p) {
  for (const std::int64_t v : {p.M, p.N, p.K, p.lda, p.ldb, p.ldc})
    if (v > INT_MAX) return "cublasSgemm takes sizes and leading dimensions below 2^31";
  return "";
}

// One cuBLAS handle per device, created with that device current. A handle is used by one thread
// at a time (cuBLAS's rule), so each call holds its lock while it sets the stream, the math mode
// and the workspace and enqueues the GEMM. The handle's own workspace would be shared by every
// stream, so each stream's calls get one of their own (cuBLAS's advice), kept for the next call:
// taken from the pool at every call, it cost a small GEMM more than the GEMM. They are kept by
// the stream's id, not its handle: cudaStreamPerThread is one handle for a different stream in
// every thread, and a new stream may take the handle of one destroyed with calls still pending.
struct DeviceHandle {
  std::mutex mutex;
  cublasHandle_t handle = nullptr;
  std::map<unsigned long long, void*> workspaces;  // by stream id, at most kCublasKeptWorkspaces
  // What the handle was last set to, so that a call on the same stream with the same math mode
  // and kept workspace makes no setter calls: each costs host time on every call, which shows
  // where the GEMM's kernel takes less. Only PreparedSgemm sets this handle.
  bool set = false;
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  void* workspace = nullptr;
};

std::mutex& handles_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<int, DeviceHandle>& handles() {
  static auto* by_device = new std::map<int, DeviceHandle>();  // never destroyed, like kernels
  return *by_device;
}

DeviceHandle& device_handle(const Cublas& blas, int device) {
  std::lock_guard<std::mutex> lock(handles_mutex());
  DeviceHandle& h = handles()[device];
  if (h.handle != nullptr) return h;
  const cublasStatus_t status = with_device_current(device, [&] { return blas.create(&h.handle); });
  check_cublas(status, "cublasCreate");
  return h;
}

class PreparedSgemm : public PreparedCandidate {
 public:
  PreparedSgemm(const Cublas& blas, int device, int math)
      : blas_(blas), device_(device), math_(math_mode(math)), handle_(device_handle(blas, device)) {
    prepare_workspace_pool(device);
  }

  // Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies B (N x K, ldb) by
  // A (K x M, lda) into C (N x M, ldc).
  void enqueue(const GemmArgs& g, cudaStream_t stream) const override {
    std::lock_guard<std::mutex> lock(handle_.mutex);
    void* kept = kept_workspace(stream);
    // A stream beyond those kept takes its workspace from the pool, call by call.
    std::optional<StreamWorkspace> pooled;
    if (kept == nullptr) kept = pooled.emplace(kCublasWorkspaceBytes, device_, stream).floats();
    const bool same_stream =
        handle_.set && handle_.stream == stream && handle_.workspace == kept && !pooled;
    const bool same_math = handle_.set && handle_.math == math_;
    handle_.set = false;  // until the handle is set as this call needs (a setter may throw)
    if (!same_stream) {
      // cublasSetStream resets the workspace to the default pool, so the workspace follows it.
      check_cublas(blas_.set_stream(handle_.handle, stream), "cublasSetStream");
      check_cublas(blas_.set_workspace(handle_.handle, kept, kCublasWorkspaceBytes),
                   "cublasSetWorkspace");
    }
    if (!same_math) check_cublas(blas_.set_math_mode(handle_.handle, math_), "cublasSetMathMode");
    handle_.stream = stream;
    handle_.workspace = kept;
    handle_.math = math_;
    handle_.set = !pooled;  // a pooled workspace is released after this call
    check_cublas(blas_.sgemm(handle_.handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.N),
                             static_cast<int>(g.M), static_cast<int>(g.K), &g.alpha, g.B,
                             static_cast<int>(g.ldb), g.A, static_cast<int>(g.lda), &g.beta, g.C,
                             static_cast<int>(g.ldc)),
                 "cublasSgemm");
    if (pooled) pooled->release();
  }

 private:
  // The workspace kept for `stream`'s calls, allocated at its first call; nullptr where
  // kCublasKeptWorkspaces streams of this device have one already, or where `stream` is
  // capturing. The handle's lock is held.
  void* kept_workspace(cudaStream_t stream) const {
    // A capturing stream's id cannot be asked for (the driver refuses it during capture); its
    // call takes a pooled workspace, which the graph then allocates and frees at each launch.
    if (captures_a_graph(stream)) return nullptr;
    unsigned long long id = 0;
    check_cuda(with_device_current(device_, [&] { return cudaStreamGetId(stream, &id); }),
               "cudaStreamGetId of the stream a cuBLAS call is enqueued on");
    if (const auto it = handle_.workspaces.find(id); it != handle_.workspaces.end())
      return it->second;
    if (handle_.workspaces.size() >= kCublasKeptWorkspaces) return nullptr;
    void* memory = nullptr;
    const cudaError_t status =
        with_device_current(device_, [&] { return cudaMalloc(&memory, kCublasWorkspaceBytes); });
    check_cuda(status, "cudaMalloc of a stream's 32 MiB cuBLAS workspace");
    return handle_.workspaces[id] = memory;
  }

  const Cublas& blas_;
  int device_;
  cublasMath_t math_;
  DeviceHandle& handle_;
};

class CublasProvider : public CandidateProvider {
 public:
  std::string prefix() const override { return kCublasPrefix; }
  bool vendor() const override { return true; }
  bool reference() const override { return true; }
  bool available() override { return cublas() != nullptr; }

  std::string why_not_a_name(const std::string& name) const override {
    std::string why;
    return parse_cublas_name(name, why) ? "" : why;
  }

  std::optional<Precision> precision_of(const std::string& name) const override {
    std::string why;
    const auto parsed = parse_cublas_name(name, why);
    if (!parsed) return std::nullopt;
    return cublas_precision(*parsed);
  }

  std::vector<std::string> candidates(const DeviceInfo&, const Problem& problem) override {
    const Cublas* blas = cublas();
    if (blas == nullptr || !why_too_large(problem).empty()) return {};
    std::vector<std::string> names;
    if (problem.precision == Precision::medium) names.push_back(cublas_name({blas->version, 1}));
    names.push_back(cublas_name({blas->version, 0}));  // true FP32 serves every precision
    return names;
  }

  std::string why_cannot_run(const std::string& name, const DeviceInfo&,
                             const Problem& problem) override {
    std::string why;
    const auto call = parse_cublas_name(name, why);
    if (!call) return why;
    const Cublas* blas = cublas();
    if (blas == nullptr) return "cuBLAS is not available in this process";
    if (call->version != blas->version)
      return "it was chosen with cuBLAS " + std::to_string(call->version) +
             ", this process loaded " + std::to_string(blas->version);
    if (!serves(cublas_precision(*call), problem.precision))
      return std::string("it computes at precision ") + to_string(cublas_precision(*call)) +
             ", less accurate than the problem's " + to_string(problem.precision);
    return why_too_large(problem);
  }

  const PreparedCandidate& prepare(const std::string& name, const DeviceInfo& device) override {
    // Preparing creates the device's handle and workspace pool: not on a thread that must not wait.
    const std::string what = name + " prepared on device " + std::to_string(device.ordinal);
    const auto lock = lock_unless_refused(mutex_, what);
    const auto key = std::make_pair(device.ordinal, name);
    if (const auto it = prepared_.find(key); it != prepared_.end()) return *it->second;
    refuse_wait(what);
    std::string why;
    const auto call = parse_cublas_name(name, why);
    if (!call) throw Error(ErrorKind::internal, "tilemm: " + why);
    const Cublas* blas = cublas();
    if (blas == nullptr) throw Error(ErrorKind::internal, "tilemm: cuBLAS is not available");
    auto made = std::make_unique<PreparedSgemm>(*blas, device.ordinal, call->math);
    return *(prepared_[key] = std::move(made));
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, std::string>, std::unique_ptr<PreparedSgemm>> prepared_;
};

}  // namespace

std::string cublas_name(const CublasCall& call) {
  return std::string(kCublasPrefix) + "_v" + std::to_string(call.version) + "_m" +
         std::to_string(call.math);
}

std::optional<CublasCall> parse_cublas_name(const std::string& name, std::string& why) {
  const auto parts = split(name, '_');
  std::optional<std::int64_t> version, math;
  if (parts.size() == 3 && parts[0] == kCublasPrefix) {
    if (parts[1].size() > 1 && parts[1][0] == 'v')
      version = parse_canonical_decimal(std::string_view(parts[1]).substr(1), 9);
    if (parts[2].size() > 1 && parts[2][0] == 'm')
      math = parse_canonical_decimal(std::string_view(parts[2]).substr(1), 1);
  }
  if (!version || !math || *math > 1) {
    why = "'" + name + "' is not cublas_v<version>_m<0 or 1>";
    return std::nullopt;
  }
  return CublasCall{*version, static_cast<int>(*math)};
}

Precision cublas_precision(const CublasCall& call) {
  return call.math == 0 ? Precision::highest : Precision::medium;
}

std::size_t cublas_kept_workspaces(int device) {
  DeviceHandle* h = nullptr;
  {
    std::lock_guard<std::mutex> lock(handles_mutex());
    const auto it = handles().find(device);
    if (it == handles().end()) return 0;
    h = &it->second;
  }
  std::lock_guard<std::mutex> lock(h->mutex);
  return h->workspaces.size();
}

std::unique_ptr<CandidateProvider> make_cublas_provider() {
  return std::make_unique<CublasProvider>();
}

}  // namespace tilemm::detail
