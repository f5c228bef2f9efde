#include "family_registry.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "kernel_sources.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {
namespace {

LaunchGeometry grid_over_c(std::int64_t M, std::int64_t N, int tile_m, int tile_n, unsigned bx,
                           unsigned by) {
  LaunchGeometry g;
  g.grid_x64 = ceil_div(N, tile_n);
  g.grid_y64 = ceil_div(M, tile_m);
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[1] = static_cast<unsigned>(g.grid_y64);
  g.block[0] = bx;
  g.block[1] = by;
  return g;
}

int no_alignment(const Variant&) { return 1; }
std::string always_valid(const Variant&) { return {}; }

// naive ---------------------------------------------------------------------------------------
constexpr int kNaiveBlock = 16;

LaunchGeometry naive_geometry(const Variant&, const Problem& p) {
  return grid_over_c(p.M, p.N, kNaiveBlock, kNaiveBlock, kNaiveBlock, kNaiveBlock);
}
std::size_t naive_shared(const Variant&) { return 0; }

// tiled ---------------------------------------------------------------------------------------
LaunchGeometry tiled_geometry(const Variant& v, const Problem& p) {
  const int t = v.param("t");
  return grid_over_c(p.M, p.N, t, t, static_cast<unsigned>(t), static_cast<unsigned>(t));
}
std::size_t tiled_shared(const Variant& v) {
  const auto t = static_cast<std::size_t>(v.param("t"));
  return 2 * t * (t + static_cast<std::size_t>(v.param("p"))) * sizeof(float);
}

}  // namespace

namespace {
std::vector<Family>& registry() {
  static std::vector<Family> all = {
      {"naive", "naive.cu", {}, always_valid, naive_geometry, naive_shared, no_alignment,
       no_k_split, false},
      {"tiled",
       "tiled.cu",
       {{"t", "TILE", {8, 16, 32}}, {"p", "PAD", {0, 1}}},
       always_valid,
       tiled_geometry,
       tiled_shared,
       no_alignment,
       no_k_split,
       false},
      warptile_family(),
      splitk_family(),
      padded_family(),
      clusterk_family(),
      gemvn_family(),
      gemvm_family(),
  };
  return all;
}
}  // namespace

const std::vector<Family>& families() { return registry(); }

int no_k_split(const Variant&) { return 1; }

std::int64_t aligned_ld(std::int64_t n) { return (std::max<std::int64_t>(n, 1) + 3) / 4 * 4; }

std::size_t workspace_bytes(const Family& family, const Variant& v, const Problem& problem) {
  const auto M = static_cast<std::size_t>(problem.M);
  const auto K = static_cast<std::size_t>(problem.K);
  const auto n4 = static_cast<std::size_t>(aligned_ld(problem.N));
  const auto k4 = static_cast<std::size_t>(aligned_ld(problem.K));
  std::size_t floats = 0;
  // Every part is a whole number of 4-float rows, so each starts 16-byte aligned.
  if (family.aligned_copies) floats += M * k4 + K * n4;
  if (const int splits = family.k_splits(v); splits > 1 && !family.cluster_reduce)
    floats += static_cast<std::size_t>(splits) * M * n4;
  return floats * sizeof(float);
}

void register_extra_family(const Family& family, const EmbeddedTemplate& source) {
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

std::vector<std::string> compile_definitions(const Variant& v) {
  const Family& f = find_family(v.family);
  std::vector<std::string> defs;
  defs.push_back("-DTILEMM_KERNEL_NAME=" + variant_name(v));
  for (std::size_t i = 0; i < f.params.size(); ++i)
    defs.push_back("-D" + f.params[i].macro + "=" + std::to_string(v.params.at(i).second));
  if (f.aligned_copies) defs.push_back("-DALIGNED_COPIES=1");
  if (f.cluster_reduce) defs.push_back("-DCLUSTER_REDUCE=1");
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
    return std::stoi(arch.substr(3)) >= min_compute_capability(find_family(v.family), v);
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace tilemm::detail
