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
    std::vector<Family> list = in_search_order(library_family_registrations());
    for (const auto& f : list) check_family(f);
    return list;
  }());
  return all;
}

}  // namespace

const std::vector<Family>& families() { return registry(); }

std::vector<Family> in_search_order(std::vector<FamilyRegistration> registrations) {
  // Stable, so that the result does not depend on the sort's algorithm even before the check
  // below refuses equal keys.
  std::stable_sort(registrations.begin(), registrations.end(),
                   [](const FamilyRegistration& a, const FamilyRegistration& b) {
                     return a.search_order < b.search_order;
                   });
  std::vector<Family> ordered;
  for (std::size_t i = 0; i < registrations.size(); ++i) {
    if (i > 0 && registrations[i].search_order == registrations[i - 1].search_order)
      throw Error(ErrorKind::internal,
                  "tilemm: " + std::string(registrations[i - 1].factory) + " and " +
                      registrations[i].factory + " both register at search order " +
                      std::to_string(registrations[i].search_order) +
                      ": each family needs a key of its own");
    ordered.push_back(registrations[i].make());
  }
  return ordered;
}

std::int64_t aligned_ld(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 3) / 4 * 4; }

void register_extra_family(const Family& family, const EmbeddedTemplate& source) {
  check_family(family);
  for (const auto& f : registry())
    if (f.name == family.name)
      throw Error(ErrorKind::internal, "tilemm: kernel family '" + family.name + "' already exists");
  register_extra_template(source);
  registry().push_back(family);
}

void register_extra_families(const std::vector<FamilyRegistration>& registrations,
                             const std::vector<EmbeddedTemplate>& templates) {
  for (const Family& family : in_search_order(registrations)) {
    const auto source = std::find_if(templates.begin(), templates.end(), [&](const auto& t) {
      return t.file == family.template_file;
    });
    if (source == templates.end())
      throw Error(ErrorKind::internal, "tilemm: kernel family '" + family.name +
                                           "' names the template '" + family.template_file +
                                           "', which is not among the templates given with it");
    register_extra_family(family, *source);
  }
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

double wave_fill(std::uint64_t blocks, int sm_count) {
  if (blocks == 0 || sm_count <= 0) return 0.0;
  const auto sms = static_cast<std::uint64_t>(sm_count);
  const std::uint64_t waves = (blocks + sms - 1) / sms;
  return double(blocks) / (double(waves) * double(sms));
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
