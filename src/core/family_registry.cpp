#include "family_registry.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "kernel_sources.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

// What every family must have set: the fields without a default, and names that split.
void check_family(const Family& f) {
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::internal, "tilemm: kernel family '" + f.name + "' " + why);
  };
  if (f.name.empty() || f.name.find('_') != std::string::npos)
    refuse("needs a name without '_' (variant names are split on it)");
  for (const auto& p : f.params)
    if (p.key.empty() || p.key.find('_') != std::string::npos || p.macro.empty() ||
        p.values.empty())
      refuse("has a parameter without a key (free of '_'), a macro or values");
  if (f.template_file.empty()) refuse("has no template_file");
  if (f.check_params == nullptr || f.geometry == nullptr || f.shared_bytes == nullptr ||
      f.required_alignment == nullptr || f.workspace_bytes == nullptr ||
      f.extra_kernels == nullptr || f.enqueue == nullptr || f.pruning_hint == nullptr ||
      f.check_problem == nullptr || f.precision == nullptr)
    refuse("leaves a required function unset (geometry and shared_bytes have no default)");
  if (f.arch_specific && f.min_compute_capability <= 0)
    refuse("is arch_specific without the min_compute_capability it is specific to");
}

// Never destroyed: a background tuning thread may still ask it while the process exits.
std::vector<Family>& registry() {
  static auto& all = *new std::vector<Family>([] {
    std::vector<Family> list = {naive_family(),      tiled_family(),     warptile_family(),
                                splitk_family(),     padded_family(),    clusterk_family(),
                                multistage_family(), streamk_family(),   gemvn_family(),
                                gemvm_family(),      gemvmring_family(), gemvnring_family(),
                                tf32mma_family(),    tf32wgmma_family(), tf32wgmmapad_family()};
    for (const auto& f : list) check_family(f);
    return list;
  }());
  return all;
}

}  // namespace

const std::vector<Family>& families() { return registry(); }

std::int64_t aligned_ld(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 3) / 4 * 4; }

void register_extra_family(const Family& family, const EmbeddedTemplate& source) {
  check_family(family);
  for (const auto& f : registry())
    if (f.name == family.name)
      throw Error(ErrorKind::internal, "tilemm: kernel family '" + family.name + "' already exists");
  register_extra_template(source);
  registry().push_back(family);
}

const Family& find_family(const std::string& name) {
  for (const auto& f : families())
    if (f.name == name) return f;
  throw InvalidArgument("family", "no kernel family called '" + name + "'");
}

const EmbeddedTemplate& template_of(const Variant& v) {
  return find_template(find_family(v.family).template_file);
}

std::uint64_t grid_blocks(const Variant& v, const Problem& problem) {
  const LaunchGeometry g = find_family(v.family).geometry(v, problem);
  return g.grid_x64 * g.grid_y64 * g.grid_z64;
}

std::uint64_t launched_blocks(const Variant& v, const Problem& problem, int sm_count) {
  const Family& f = find_family(v.family);
  return f.persistent_blocks != nullptr ? f.persistent_blocks(v, problem, sm_count)
                                        : grid_blocks(v, problem);
}

std::vector<std::string> compile_definitions(const Variant& v) {
  const Family& f = find_family(v.family);
  std::vector<std::string> defs;
  defs.push_back("-DTILEMM_KERNEL_NAME=" + variant_name(v));
  for (std::size_t i = 0; i < f.params.size(); ++i)
    defs.push_back("-D" + f.params[i].macro + "=" + std::to_string(v.params.at(i).second));
  defs.insert(defs.end(), f.extra_definitions.begin(), f.extra_definitions.end());
  return defs;
}

int min_compute_capability(const Family& family, const Variant& v) {
  const int variant = family.variant_min_compute_capability != nullptr
                          ? family.variant_min_compute_capability(v)
                          : 0;
  return std::max(family.min_compute_capability, variant);
}

bool variant_builds_for(const Variant& v, const std::string& arch) {
  // "sm_90" -> 90; an architecture name that does not parse is left to NVRTC to reject.
  if (arch.rfind("sm_", 0) != 0) return true;
  try {
    const Family& family = find_family(v.family);
    const int cc = std::stoi(arch.substr(3)), least = min_compute_capability(family, v);
    return family.arch_specific ? cc == least : cc >= least;
  } catch (const std::exception&) {
    return true;
  }
}

std::string nvrtc_architecture(const Variant& v, const std::string& arch) {
  return find_family(v.family).arch_specific ? arch + "a" : arch;
}

}  // namespace tilemm::detail
