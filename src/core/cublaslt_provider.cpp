#include "cublaslt_provider.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include "cublaslt_library.hpp"
#include "cublaslt_names.hpp"
#include "launch.hpp"
#include "no_wait.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

cublasComputeType_t compute_type(int compute) {
  return compute == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
}

// The descriptors of one problem as cuBLASLt sees it (column-major C^T = B^T A^T), on the stack:
// no allocation, so a call can build them every time.
struct Descriptors {
  cublasLtMatmulDescOpaque_t op{};
  cublasLtMatrixLayoutOpaque_t a{}, b{}, c{};  // a: B^T (N x K), b: A^T (K x M), c: C^T (N x M)

  Descriptors(const CublasLt& lt, int compute, std::int64_t M, std::int64_t N, std::int64_t K,
              std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
    check_cublaslt(lt.desc_init(&op, sizeof op, compute_type(compute), CUDA_R_32F),
                   "cublasLtMatmulDescInit");
    check_cublaslt(lt.layout_init(&a, sizeof a, CUDA_R_32F, std::uint64_t(N), std::uint64_t(K), ldb),
                   "cublasLtMatrixLayoutInit(B)");
    check_cublaslt(lt.layout_init(&b, sizeof b, CUDA_R_32F, std::uint64_t(K), std::uint64_t(M), lda),
                   "cublasLtMatrixLayoutInit(A)");
    check_cublaslt(lt.layout_init(&c, sizeof c, CUDA_R_32F, std::uint64_t(N), std::uint64_t(M), ldc),
                   "cublasLtMatrixLayoutInit(C)");
  }
  Descriptors(const CublasLt& lt, int compute, const Problem& p)
      : Descriptors(lt, compute, p.M, p.N, p.K, p.lda, p.ldb, p.ldc) {}
};

template <class T>
T config_value(const CublasLt& lt, const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr,
               const char* what) {
  T value{};
  std::size_t written = 0;
  check_cublaslt(lt.config_get(&algo, attr, &value, sizeof value, &written), what);
  return value;
}

template <class T>
void set_config(const CublasLt& lt, cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr,
                std::int64_t value, const char* what) {
  const T v = static_cast<T>(value);
  check_cublaslt(lt.config_set(&algo, attr, &v, sizeof v), what);
}

CublasLtConfig config_of(const CublasLt& lt, const cublasLtMatmulAlgo_t& algo, int compute) {
  CublasLtConfig c;
  c.version = static_cast<std::int64_t>(lt.version);
  c.compute = compute;
  const char* get = "cublasLtMatmulAlgoConfigGetAttribute";
  c.algo = config_value<std::int32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_ID, get);
  c.tile = config_value<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_TILE_ID, get);
  c.stages = config_value<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, get);
  c.split_k = config_value<std::int32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, get);
  c.reduction = config_value<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, get);
  c.swizzle = config_value<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, get);
  c.custom = config_value<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, get);
  c.inner = config_value<std::uint16_t>(lt, algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, get);
  c.cluster = config_value<std::uint16_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, get);
  return c;
}

// The algorithm a name spells, rebuilt without the heuristic.
cublasLtMatmulAlgo_t restore(const CublasLt& lt, cublasLtHandle_t handle, const CublasLtConfig& c) {
  cublasLtMatmulAlgo_t algo{};
  check_cublaslt(lt.algo_init(handle, compute_type(c.compute), CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                              CUDA_R_32F, CUDA_R_32F, static_cast<int>(c.algo), &algo),
                 "cublasLtMatmulAlgoInit");
  const char* set = "cublasLtMatmulAlgoConfigSetAttribute";
  set_config<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_TILE_ID, c.tile, set);
  set_config<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, c.stages, set);
  set_config<std::int32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, c.split_k, set);
  set_config<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, c.reduction, set);
  set_config<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, c.swizzle, set);
  set_config<std::uint32_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, c.custom, set);
  set_config<std::uint16_t>(lt, algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, c.inner, set);
  set_config<std::uint16_t>(lt, algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, c.cluster, set);
  return algo;
}

class PreparedAlgo : public PreparedCandidate {
 public:
  PreparedAlgo(const CublasLt& lt, cublasLtHandle_t handle, int device, const CublasLtConfig& c)
      : lt_(lt), handle_(handle), device_(device), compute_(c.compute),
        algo_(restore(lt, handle, c)) {
    prepare_workspace_pool(device);
  }

  void enqueue(const GemmArgs& g, cudaStream_t stream) const override {
    Descriptors d(lt_, compute_, g.M, g.N, g.K, g.lda, g.ldb, g.ldc);
    // Most algorithms need no workspace, and taking one from the pool costs each call more host
    // time than a small GEMM runs. One that needs it refuses a call without it before launching
    // anything, with CUBLAS_STATUS_INVALID_VALUE or, for some split-K algorithms,
    // CUBLAS_STATUS_NOT_SUPPORTED; from then on its calls take it from the pool.
    if (!needs_workspace_.load(std::memory_order_relaxed)) {
      const cublasStatus_t status =
          lt_.matmul(handle_, &d.op, &g.alpha, g.B, &d.a, g.A, &d.b, &g.beta, g.C, &d.c, g.C, &d.c,
                     &algo_, nullptr, 0, stream);
      if (status != CUBLAS_STATUS_INVALID_VALUE && status != CUBLAS_STATUS_NOT_SUPPORTED) {
        check_cublaslt(status, "cublasLtMatmul");
        return;
      }
      needs_workspace_.store(true, std::memory_order_relaxed);
    }
    StreamWorkspace workspace(kCublasLtWorkspaceBytes, device_, stream);
    check_cublaslt(lt_.matmul(handle_, &d.op, &g.alpha, g.B, &d.a, g.A, &d.b, &g.beta, g.C, &d.c,
                              g.C, &d.c, &algo_, workspace.floats(), kCublasLtWorkspaceBytes,
                              stream),
                   "cublasLtMatmul");
    workspace.release();
  }

 private:
  const CublasLt& lt_;
  cublasLtHandle_t handle_;
  int device_;
  int compute_;
  cublasLtMatmulAlgo_t algo_;
  mutable std::atomic<bool> needs_workspace_{false};
};

class CublasLtProvider : public CandidateProvider {
 public:
  std::string prefix() const override { return kCublasLtPrefix; }
  bool vendor() const override { return true; }
  bool available() override { return cublaslt() != nullptr; }

  std::string why_not_a_name(const std::string& name) const override {
    std::string why;
    return parse_cublaslt_name(name, why) ? "" : why;
  }

  std::optional<Precision> precision_of(const std::string& name) const override {
    std::string why;
    const auto parsed = parse_cublaslt_name(name, why);
    if (!parsed) return std::nullopt;
    return cublaslt_precision(*parsed);
  }

  std::vector<std::string> candidates(const DeviceInfo& device, const Problem& problem) override {
    const CublasLt* lt = cublaslt();
    if (lt == nullptr) return {};
    std::vector<int> computes{0};  // true FP32 serves every precision
    if (problem.precision == Precision::medium) computes.insert(computes.begin(), 1);
    std::vector<std::string> names;
    const cublasLtHandle_t handle = cublaslt_handle(*lt, device.ordinal);
    for (const int compute : computes) {
      Descriptors d(*lt, compute, problem);
      cublasLtMatmulPreferenceOpaque_t pref{};
      check_cublaslt(lt->preference_init(&pref, sizeof pref), "cublasLtMatmulPreferenceInit");
      const std::uint64_t workspace = kCublasLtWorkspaceBytes;
      check_cublaslt(lt->preference_set(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                        sizeof workspace),
                     "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
      // The class's alignment, not cudaMalloc's 256 bytes: an algorithm chosen here runs every
      // call of the class.
      const std::uint32_t bytes = static_cast<std::uint32_t>(problem.alignment * sizeof(float));
      for (const auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                              CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        check_cublaslt(lt->preference_set(&pref, attr, &bytes, sizeof bytes),
                       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
      cublasLtMatmulHeuristicResult_t results[kCublasLtHeuristicCount] = {};
      int returned = 0;
      count_heuristic_query();
      const cublasStatus_t status =
          lt->get_heuristic(handle, &d.op, &d.a, &d.b, &d.c, &d.c, &pref, kCublasLtHeuristicCount,
                            results, &returned);
      if (status == CUBLAS_STATUS_NOT_SUPPORTED) continue;  // no algorithm for this problem
      check_cublaslt(status, "cublasLtMatmulAlgoGetHeuristic");
      const auto add = [&names](const std::string& name) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      };
      int split_siblings = 0;
      for (int i = 0; i < returned; ++i) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
        const CublasLtConfig config = config_of(*lt, results[i].algo, compute);
        add(cublaslt_name(config));
        // The heuristic picks one split of K per algorithm; where K is long beside a small
        // output, half or twice that split can be faster. For the first split-K results, those
        // two join the candidates (the search times them; AlgoCheck refuses what cannot run).
        if (config.split_k > 1 && split_siblings < kCublasLtSplitSiblings) {
          for (const std::int64_t split : {config.split_k / 2, config.split_k * 2}) {
            if (split < 2 || split > kCublasLtMostSplitK) continue;
            CublasLtConfig sibling = config;
            sibling.split_k = split;
            add(cublaslt_name(sibling));
          }
          ++split_siblings;
        }
      }
    }
    return names;
  }

  std::string why_cannot_run(const std::string& name, const DeviceInfo& device,
                             const Problem& problem) override {
    std::string why;
    const auto config = parse_cublaslt_name(name, why);
    if (!config) return why;
    const CublasLt* lt = cublaslt();
    if (lt == nullptr) return "cuBLASLt is not available in this process";
    if (config->version != static_cast<std::int64_t>(lt->version))
      return "it was chosen with cuBLASLt " + std::to_string(config->version) +
             ", this process loaded " + std::to_string(lt->version);
    if (!serves(cublaslt_precision(*config), problem.precision))
      return std::string("it computes at precision ") + to_string(cublaslt_precision(*config)) +
             ", less accurate than the problem's " + to_string(problem.precision);
    try {
      const cublasLtHandle_t handle = cublaslt_handle(*lt, device.ordinal);
      const cublasLtMatmulAlgo_t algo = restore(*lt, handle, *config);
      Descriptors d(*lt, config->compute, problem);
      cublasLtMatmulHeuristicResult_t result{};
      check_cublaslt(lt->algo_check(handle, &d.op, &d.a, &d.b, &d.c, &d.c, &algo, &result),
                     "cublasLtMatmulAlgoCheck");
      if (result.workspaceSize > kCublasLtWorkspaceBytes)
        return "its workspace of " + std::to_string(result.workspaceSize) + " bytes exceeds " +
               std::to_string(kCublasLtWorkspaceBytes);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  const PreparedCandidate& prepare(const std::string& name, const DeviceInfo& device) override {
    const std::string what = name + " prepared on device " + std::to_string(device.ordinal);
    const auto lock = lock_unless_refused(mutex_, what);
    const auto key = std::make_pair(device.ordinal, name);
    if (const auto it = prepared_.find(key); it != prepared_.end()) return *it->second;
    refuse_wait(what);
    std::string why;
    const auto config = parse_cublaslt_name(name, why);
    if (!config) throw Error(ErrorKind::internal, "tilemm: " + why);
    const CublasLt* lt = cublaslt();
    if (lt == nullptr) throw Error(ErrorKind::internal, "tilemm: cuBLASLt is not available");
    auto made = std::make_unique<PreparedAlgo>(*lt, cublaslt_handle(*lt, device.ordinal),
                                               device.ordinal, *config);
    return *(prepared_[key] = std::move(made));
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, std::string>, std::unique_ptr<PreparedAlgo>> prepared_;
};

}  // namespace

std::unique_ptr<CandidateProvider> make_cublaslt_provider() {
  return std::make_unique<CublasLtProvider>();
}

}  // namespace tilemm::detail
