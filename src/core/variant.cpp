// Variant names, parsing and the enumerated space, all derived from the family registry.
#include "tilemm/variant.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

#include "family_registry.hpp"
#include "text_fields.hpp"
#include "tilemm/error.hpp"

namespace tilemm {

using detail::families;
using detail::find_family;

namespace {

// Keys are a few letters, and the checks of a family's whole space look them up by the thousand:
// compared in place, without a call to the library's memcmp.
bool same_key(const std::string& a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

int Variant::param(std::string_view key) const {
  for (const auto& [k, value] : params)
    if (same_key(k, key)) return value;
  throw Error(ErrorKind::internal, "tilemm: variant of family '" + family +
                                       "' has no parameter '" + std::string(key) + "'");
}

std::string variant_name(const Variant& v) {
  std::string name = v.family;
  for (const auto& [key, value] : v.params) name += "_" + key + std::to_string(value);
  return name;
}

namespace {

// A parameter value in its canonical spelling only, so that names stay unique keys; 9 digits
// always fit an int.
std::optional<int> parse_parameter_value(std::string_view digits) {
  const auto value = detail::parse_canonical_decimal(digits, 9);
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

}  // namespace

Variant parse_variant(const std::string& name) {
  const auto parts = detail::split(name, '_');
  const detail::Family* family = nullptr;
  for (const auto& f : families())
    if (f.name == parts[0]) family = &f;
  if (family == nullptr)
    throw InvalidArgument("variant", "'" + name + "' does not start with a known kernel family");
  if (parts.size() != family->params.size() + 1)
    throw InvalidArgument("variant", "'" + name + "' must have " +
                                         std::to_string(family->params.size()) +
                                         " parameters for family '" + family->name + "'");
  Variant v{family->name, {}};
  for (std::size_t i = 0; i < family->params.size(); ++i) {
    const auto& spec = family->params[i];
    const std::string& part = parts[i + 1];
    const auto parsed = part.compare(0, spec.key.size(), spec.key) == 0
                            ? parse_parameter_value(std::string_view(part).substr(spec.key.size()))
                            : std::nullopt;
    if (!parsed)
      throw InvalidArgument("variant", "'" + name + "': parameter " + std::to_string(i + 1) +
                                           " must be '" + spec.key + "<number>', got '" + part +
                                           "'");
    const int value = *parsed;
    bool in_space = false;
    for (int allowed : spec.values) in_space = in_space || allowed == value;
    if (!in_space)
      throw InvalidArgument("variant", "'" + name + "': " + spec.key + "=" +
                                           std::to_string(value) + " is not in the space of '" +
                                           family->name + "'");
    v.params.emplace_back(spec.key, value);
  }
  if (std::string why = family->check_params(v); !why.empty())
    throw InvalidArgument("variant", "'" + name + "' is not a valid kernel: " + why);
  return v;
}

std::vector<std::string> family_names() {
  std::vector<std::string> names;
  for (const auto& f : families()) names.push_back(f.name);
  return names;
}

std::vector<Variant> variant_space(const std::string& family_name) {
  const auto& family = find_family(family_name);
  // Cartesian product of the value lists, odometer order: the first parameter varies slowest.
  std::vector<Variant> out;
  std::vector<std::size_t> index(family.params.size(), 0);
  while (true) {
    Variant v{family.name, {}};
    v.params.reserve(family.params.size());
    for (std::size_t i = 0; i < family.params.size(); ++i)
      v.params.emplace_back(family.params[i].key, family.params[i].values[index[i]]);
    if (family.check_params(v).empty()) out.push_back(std::move(v));
    std::size_t i = family.params.size();
    while (i > 0) {
      --i;
      if (++index[i] < family.params[i].values.size()) break;
      index[i] = 0;
      if (i == 0) return out;
    }
    if (family.params.empty()) return out;
  }
}

std::vector<Variant> variant_space() {
  std::vector<Variant> all;
  for (const auto& f : families()) {
    auto some = variant_space(f.name);
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

// What gemm() runs when nothing is tuned near a problem (tuning off) and for K == 0: a
// register-blocked kernel of scalar loads, so that it runs every alignment and every size that
// gemm() launches; how it compares with the textbook tile it replaced: docs/kernels.md.
Variant default_variant() { return parse_variant("warptile_bm64_bn128_bk16_wm32_wn64_tm4_tn4_v1_mb1"); }

Precision precision_of(const Variant& v) {
  const auto& family = find_family(v.family);
  return family.precision(v);
}

std::vector<Variant> variant_space(Precision precision) {
  std::vector<Variant> out;
  for (auto& v : variant_space())
    if (precision_of(v) == precision) out.push_back(std::move(v));
  return out;
}

// For high and medium: a 128x128 tensor-core tile of 8 warps, 4-byte copies so that it runs
// every alignment. Like default_variant(), a guess that runs every shape, not a measured winner.
Variant default_variant(Precision precision) {
  switch (precision) {
    case Precision::highest: break;
    case Precision::high:
      return parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp3_v1");
    case Precision::medium:
      return parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp1_v1");
  }
  return default_variant();
}

Problem Problem::dense(std::int64_t M, std::int64_t N, std::int64_t K, int alignment) {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.lda = K > 0 ? K : 1;
  p.ldb = N > 0 ? N : 1;
  p.ldc = p.ldb;
  // The class can only be as good as the leading dimensions allow: rows of a 129-wide matrix
  // start at every alignment, whatever the base pointer's.
  while (alignment > 1 && (p.lda % alignment != 0 || p.ldb % alignment != 0))
    alignment /= 2;
  p.alignment = alignment;
  return p;
}

int alignment_class(const void* A, const void* B, const void* C, std::int64_t lda,
                    std::int64_t ldb, std::int64_t ldc) {
  for (int floats : {4, 2}) {
    const auto bytes = static_cast<std::uintptr_t>(floats) * sizeof(float);
    const bool pointers = reinterpret_cast<std::uintptr_t>(A) % bytes == 0 &&
                          reinterpret_cast<std::uintptr_t>(B) % bytes == 0 &&
                          reinterpret_cast<std::uintptr_t>(C) % bytes == 0;
    if (pointers && lda % floats == 0 && ldb % floats == 0 && ldc % floats == 0) return floats;
  }
  return 1;
}

Verdict can_run(const Variant& v, const DeviceInfo& device, const Problem& problem) {
  auto no = [](std::string reason) { return Verdict{false, std::move(reason)}; };
  const detail::Family* family = nullptr;
  for (const auto& f : families())
    if (f.name == v.family) family = &f;
  if (family == nullptr) return no("unknown kernel family '" + v.family + "'");
  if (v.params.size() != family->params.size())
    return no("wrong number of parameters for family '" + v.family + "'");
  if (std::string why = family->check_params(v); !why.empty()) return no(why);
  if (const int cc = device.cc_major * 10 + device.cc_minor, least = detail::min_compute_capability(*family, v); cc < least)
    return no("needs compute capability " + std::to_string(least / 10) +
              "." + std::to_string(least % 10) + " or newer, the device has " + std::to_string(device.cc_major) + "." +
              std::to_string(device.cc_minor));
  else if (family->arch_specific && cc != least)
    return no("needs compute capability exactly " + std::to_string(least / 10) + "." +
              std::to_string(least % 10) + " (compiled for sm_" + std::to_string(least) +
              "a), the device has " + std::to_string(device.cc_major) + "." +
              std::to_string(device.cc_minor));

  if (const Precision offered = family->precision(v); !serves(offered, problem.precision))
    return no(std::string("it computes at precision ") + to_string(offered) +
              ", less accurate than the problem's " + to_string(problem.precision));
  if (std::string why = family->check_problem(v, problem); !why.empty()) return no(why);

  const auto g = family->geometry(v, problem);
  const long threads = static_cast<long>(g.block[0]) * g.block[1] * g.block[2];
  if (threads > device.max_threads_per_block)
    return no(std::to_string(threads) + " threads per block exceed the device's " +
              std::to_string(device.max_threads_per_block));
  const std::size_t shared = family->shared_bytes(v);
  if (shared > device.max_shared_per_block_optin)
    return no(std::to_string(shared) + " bytes of shared memory per block exceed the device's " +
              std::to_string(device.max_shared_per_block_optin));
  if (g.grid_x64 > static_cast<std::uint64_t>(device.max_grid_x) ||
      g.grid_y64 > static_cast<std::uint64_t>(device.max_grid_y) ||
      g.grid_z64 > static_cast<std::uint64_t>(device.max_grid_z))
    return no("grid " + std::to_string(g.grid_x64) + "x" + std::to_string(g.grid_y64) + "x" +
              std::to_string(g.grid_z64) + " exceeds the device's grid limits");
  // A family's workspace (split-K slices, aligned copies) is allocated per call; past this limit
  // the allocation is a surprise for the application (and could fail mid-call), and no family
  // that needs one is for such sizes (small M x N; odd leading dimensions around N ~ 4096).
  constexpr std::size_t kMaxWorkspace = std::size_t{1} << 30;
  if (const std::size_t bytes = family->workspace_bytes(v, problem, device);
      bytes > kMaxWorkspace)
    return no("its workspace of " + std::to_string(bytes >> 20) + " MiB exceeds the " +
              std::to_string(kMaxWorkspace >> 20) + " MiB limit");
  const int needed = family->required_alignment(v);
  if (problem.alignment < needed)
    return no("needs pointers and leading dimensions aligned to " + std::to_string(needed) +
              " floats, the problem has " + std::to_string(problem.alignment));
  return {};
}

}  // namespace tilemm
