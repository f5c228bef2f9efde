#include "family_fingerprint.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include "family_registry.hpp"
#include "fnv1a.hpp"
#include "kernel_sources.hpp"
#include "log.hpp"

namespace tilemm::detail {
namespace {

// The problem as the fingerprint sees it: the fields family_can_serve reads, with dense leading
// dimensions, so that two calls of one shape and class get one answer whatever their strides.
Problem canonical(const Problem& p) {
  Problem c = Problem::dense(p.M, p.N, p.K);
  c.alignment = p.alignment;
  c.precision = p.precision;
  return c;
}

using Spaces = std::map<std::string, std::vector<Variant>>;

// Every family's space, listed once per process: the spaces never change, listing them costs more
// than the checks below, and every fingerprint checks every family.
Spaces list_spaces() {
  Spaces spaces;
  for (const Family& f : families()) spaces.emplace(f.name, variant_space(f.name));
  return spaces;
}

const std::vector<Variant>& space_of(const Family& family) {
  static std::mutex mutex;
  static auto& spaces = *new Spaces();
  const std::lock_guard<std::mutex> lock(mutex);
  // A family registered after the first listing (a test's trial family) is listed on its own.
  if (spaces.empty())
    spaces = timed_step("the kernel families' variant spaces listed", list_spaces);
  auto it = spaces.find(family.name);
  if (it == spaces.end()) it = spaces.emplace(family.name, variant_space(family.name)).first;
  return it->second;
}

std::string fingerprint_of(const Problem& problem, int compute_capability,
                           const std::function<std::string_view(const Family&)>& digest_of) {
  std::string text;  // "name:file:sha256;" of each family
  for (const Family* f : families_serving(problem, compute_capability))
    text.append(f->name).append(":").append(f->template_file).append(":").append(digest_of(*f))
        .append(";");
  return fnv1a_hex(text);
}

std::string_view embedded_digest(const Family& family) {
  return find_template(family.template_file).sha256;
}

}  // namespace

bool family_can_serve(const Family& family, const Problem& problem, int compute_capability) {
  for (const Variant& v : space_of(family)) {
    const int least = min_compute_capability(family, v);
    if (compute_capability < least || (family.arch_specific && compute_capability != least))
      continue;
    if (!serves(family.precision(v), problem.precision)) continue;
    if (problem.alignment < family.required_alignment(v)) continue;
    if (!family.check_problem(v, problem).empty()) continue;
    return true;
  }
  return false;
}

std::vector<const Family*> families_serving(const Problem& problem, int compute_capability) {
  const Problem p = canonical(problem);
  std::vector<const Family*> out;
  for (const Family& f : families())
    if (family_can_serve(f, p, compute_capability)) out.push_back(&f);
  return out;
}

std::string kernels_fingerprint(const Problem& problem, int compute_capability) {
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, int, Precision, int, std::size_t>;
  // Bounded: a process that meets more shapes than this starts the memo afresh.
  constexpr std::size_t kMostShapes = 1 << 16;
  static std::mutex mutex;
  static auto& memo = *new std::map<Key, std::string>();
  const Key key{problem.M,         problem.N,          problem.K,        problem.alignment,
                problem.precision, compute_capability, families().size()};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = memo.find(key); it != memo.end()) return it->second;
  }
  std::string fingerprint = fingerprint_of(problem, compute_capability, embedded_digest);
  const std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() >= kMostShapes) memo.clear();
  memo.emplace(key, fingerprint);
  return fingerprint;
}

std::string kernels_fingerprint(const Problem& problem, int compute_capability,
                                const std::function<std::string_view(const Family&)>& digest_of) {
  return fingerprint_of(problem, compute_capability, digest_of);
}

}  // namespace tilemm::detail
