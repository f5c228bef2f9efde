#include "candidate_provider.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "cublas_provider.hpp"
#include "cublaslt_provider.hpp"
#include "family_registry.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

std::atomic<std::uint64_t> heuristic_queries{0};

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<CandidateProvider>> providers;
};

// Never destroyed: prepared candidates handed to the dispatcher's memo live as long as the
// process.
Registry& registry() {
  static auto* r = [] {
    auto* made = new Registry();
    made->providers.push_back(make_cublaslt_provider());
    made->providers.push_back(make_cublas_provider());
    return made;
  }();
  return *r;
}

}  // namespace

std::vector<CandidateProvider*> candidate_providers() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<CandidateProvider*> out;
  for (const auto& p : r.providers) out.push_back(p.get());
  return out;
}

std::vector<CandidateProvider*> candidate_providers(const Problem& problem) {
  std::vector<CandidateProvider*> out;
  for (CandidateProvider* p : candidate_providers())
    if (problem.vendor || !p->vendor()) out.push_back(p);
  return out;
}

std::string name_prefix(const std::string& name) { return name.substr(0, name.find('_')); }

CandidateProvider* provider_of(const std::string& name) {
  const std::string first = name_prefix(name);
  for (CandidateProvider* p : candidate_providers())
    if (p->prefix() == first) return p;
  return nullptr;
}

bool is_vendor_candidate(const std::string& name) {
  const CandidateProvider* provider = provider_of(name);
  return provider != nullptr && provider->vendor();
}

bool vendor_candidates_available() {
  for (CandidateProvider* p : candidate_providers())
    if (p->vendor() && p->available()) return true;
  return false;
}

void register_candidate_provider(std::unique_ptr<CandidateProvider> provider) {
  const std::string prefix = provider->prefix();
  const auto names = family_names();
  if (prefix.empty() || prefix.find('_') != std::string::npos ||
      std::find(names.begin(), names.end(), prefix) != names.end() || provider_of(prefix) != nullptr)
    throw Error(ErrorKind::internal,
                "tilemm: candidate provider prefix '" + prefix + "' is empty, has '_' or is taken");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.providers.push_back(std::move(provider));
}

void unregister_candidate_provider(const std::string& prefix) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.providers.erase(std::remove_if(r.providers.begin(), r.providers.end(),
                                   [&](const auto& p) { return p->prefix() == prefix; }),
                    r.providers.end());
}

std::uint64_t heuristic_query_count() { return heuristic_queries.load(std::memory_order_relaxed); }
void count_heuristic_query() { heuristic_queries.fetch_add(1, std::memory_order_relaxed); }

}  // namespace tilemm::detail
