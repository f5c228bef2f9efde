// Candidate providers: where candidates come from besides the NVRTC template families. A provider
// lists its candidates for a problem by canonical name, says why one cannot run, and prepares a
// runnable for a name; the tuner verifies and times what it lists on the same bench as every
// variant, the cache stores the winner's name like any other, and the dispatcher launches the
// prepared candidate. None of them tests which provider it is: cuBLASLt (cublaslt_provider.cpp)
// and cuBLAS (cublas_provider.cpp) are two, a test's fake another, and the next
// (CUTLASS-generated kernels, a kernel registered from Python) registers here and changes nothing
// in tuner/, cache/ or src/dispatch/.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilemm/device.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

// A provider's candidate made ready for one device: prepared once per process, then enqueued on
// every call it serves with no lookup, no heuristic and no dlsym.
class PreparedCandidate {
 public:
  virtual ~PreparedCandidate() = default;
  // C = alpha * A * B + beta * C for `args` (validated, and the candidate's provider said it can
  // run args.problem()), enqueued on `stream` without synchronizing. Throws tilemm::Error naming
  // the failed call.
  virtual void enqueue(const GemmArgs& args, cudaStream_t stream) const = 0;

  // Whether it has run once in this process off the callers' threads: a vendor library's first
  // launch loads its kernels, tens of milliseconds, which a background caller must not wait for
  // (no_wait.hpp). The dispatcher's worker runs it once, then sets this.
  bool warmed() const { return warmed_.load(std::memory_order_acquire); }
  void set_warmed() const { warmed_.store(true, std::memory_order_release); }

 private:
  mutable std::atomic<bool> warmed_{false};
};

class CandidateProvider {
 public:
  virtual ~CandidateProvider() = default;
  // The first part of each of its candidates' names (names are split on '_'); no '_', and no
  // family's name.
  virtual std::string prefix() const = 0;
  // A vendor library's kernels (cuBLASLt, cuBLAS): excluded where a problem asks for own kernels only
  // (Problem::vendor, Options::vendor, TILEMM_VENDOR=off).
  virtual bool vendor() const = 0;
  // Whether its candidates are the call an application would otherwise make (cuBLAS's
  // cublasSgemm): the rotated look at a same-buffers problem's finalists measures them against it
  // in each mode (tuner/rotated_finalists.hpp).
  virtual bool reference() const { return false; }
  // Whether its candidates can be listed and run in this process (its library loaded); the same
  // answer for the life of the process. A tuning whose vendor providers are all unavailable
  // chose among own kernels only, and its result is stored as such (cache/candidate_set.hpp).
  virtual bool available() = 0;
  // Why `name` is not the canonical name of one of its candidates (parse(name(x)) == x); empty
  // when it is. Cheap and the same on every machine: no library is loaded for it.
  virtual std::string why_not_a_name(const std::string& name) const = 0;
  // The precision its candidate `name` (a canonical name) computes at, where the name says it;
  // nullopt where the provider does not tell. The readers of stored entries refuse a winner less
  // accurate than its entry's precision by it. Cheap, and no library is loaded for it.
  virtual std::optional<Precision> precision_of(const std::string& name) const {
    (void)name;
    return std::nullopt;
  }
  // Its candidates for `problem` on `device`, by name; none where it is unavailable here (its
  // library is missing). May ask the vendor's heuristic; counted by heuristic_queries().
  virtual std::vector<std::string> candidates(const DeviceInfo& device, const Problem& problem) = 0;
  // Why the candidate `name` cannot serve `problem` on `device` in this process (unavailable
  // here, another library version, less accurate than the problem asks, a layout it refuses);
  // empty when it can. No heuristic query.
  virtual std::string why_cannot_run(const std::string& name, const DeviceInfo& device,
                                     const Problem& problem) = 0;
  // The candidate ready to run on `device`, kept for the life of the process (a second call
  // returns the same object). Throws tilemm::Error where it cannot be prepared.
  virtual const PreparedCandidate& prepare(const std::string& name, const DeviceInfo& device) = 0;
};

// Every registered provider: cuBLASLt, cuBLAS, then those added by register_candidate_provider.
std::vector<CandidateProvider*> candidate_providers();
// The providers a problem may draw on: all, or without the vendor ones when !problem.vendor.
std::vector<CandidateProvider*> candidate_providers(const Problem& problem);
// The part of a candidate's name that says whose it is: up to its first '_' (all of it without
// one). A provider's prefix is compared with it whole: "cublas" names none of "cublaslt_..."'s.
std::string name_prefix(const std::string& name);
// The provider whose prefix is name_prefix(name), or nullptr (a variant's or a plan's name).
CandidateProvider* provider_of(const std::string& name);
// Whether `name` is a candidate of a vendor provider (provider_of(name)->vendor()).
bool is_vendor_candidate(const std::string& name);
// Whether a vendor provider is available in this process (CandidateProvider::available), so that
// a problem allowing vendor candidates is tuned with them.
bool vendor_candidates_available();
// Adds a provider (a test's fake, a kernel registered from Python). Call before tilemm tunes or
// dispatches. Throws tilemm::Error (internal) when its prefix is taken by a provider or a family.
void register_candidate_provider(std::unique_ptr<CandidateProvider> provider);
// Removes the provider with `prefix` (tests that register a fake for a while).
void unregister_candidate_provider(const std::string& prefix);

// Queries of a vendor heuristic (cublasLtMatmulAlgoGetHeuristic) in this process.
std::uint64_t heuristic_query_count();
void count_heuristic_query();

}  // namespace tilemm::detail
