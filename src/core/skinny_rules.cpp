// The rules that the families of kernel_templates/gemvn.cu and gemvm.cu share.
#include "skinny_rules.hpp"

#include <utility>

namespace tilemm::detail {
namespace {

// Thread block clusters (the split variants) need sm_90.
int skinny_min_compute_capability(const Variant& v) { return v.param("s") > 1 ? 90 : 0; }

// Every variant chooses its load widths at run time from the actual pointers and leading
// dimensions (skinny.cuh), so every alignment class runs every variant.
int skinny_alignment(const Variant&) { return 1; }

}  // namespace

bool one_of(int value, std::initializer_list<int> allowed) {
  for (int a : allowed)
    if (a == value) return true;
  return false;
}

std::string check_split_and_width(const Variant& v, const char* per_lane_macro, int per_lane,
                                  const char* extent_macro, int extent, bool b_ring) {
  if (!one_of(v.param("s"), {1, 2, 4, 8}))
    return "SPLIT_K is 1, 2, 4 or 8 blocks of a cluster: more than 8 is not portable";
  if (!one_of(per_lane, {1, 2, 4}))
    return std::string(per_lane_macro) + " is 1, 2 or 4";
  if (extent >= 8) {
    if (per_lane != 4 && !b_ring)
      return std::string(per_lane_macro) + " is 4 where " + extent_macro +
             " >= 8 (the wide shape, which stages the small operand in shared memory)";
    return {};
  }
  if (per_lane != 1 && per_lane * extent > 4)
    return std::string(per_lane_macro) + " above 1 only where " + per_lane_macro + " x " +
           extent_macro + " <= 4: more accumulators do not fit the registers of 4 blocks per SM";
  return {};
}

std::string check_served_extent(std::int64_t extent, int most, const char* dimension,
                                const char* family) {
  if (extent > most)
    return std::string(family) + " serves " + dimension + " <= " + std::to_string(most) +
           ", the problem has " + dimension + " = " + std::to_string(extent) +
           (most == 16 ? " (a tiled family serves it)" : "");
  if (most > 1 && extent <= most / 2)
    return std::string(family) + " with " + std::to_string(most) + " serves " + dimension +
           " in " + std::to_string(most / 2 + 1) + ".." + std::to_string(most) + ", the problem has " +
           dimension + " = " + std::to_string(extent) + " (the variant of " +
           std::to_string(most / 2) + " serves it with less arithmetic)";
  return {};
}

LaunchGeometry skinny_geometry(std::uint64_t blocks, const Variant& v) {
  LaunchGeometry g;
  g.grid_x64 = blocks;
  g.grid_z64 = static_cast<std::uint64_t>(v.param("s"));
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  g.block[0] = kSkinnyThreads;
  return g;
}

int ring_min_compute_capability(const Variant& v) { return v.param("s") > 1 ? 90 : 80; }

Family skinny_family(std::string name, std::string template_file, std::vector<ParamSpec> params,
                     std::string (*check_params)(const Variant&),
                     LaunchGeometry (*geometry)(const Variant&, const Problem&),
                     std::size_t (*shared_bytes)(const Variant&),
                     std::string (*check_problem)(const Variant&, const Problem&)) {
  Family f;
  f.name = std::move(name);
  f.template_file = std::move(template_file);
  f.params = std::move(params);
  f.check_params = check_params;
  f.variant_min_compute_capability = skinny_min_compute_capability;
  f.check_problem = check_problem;
  f.geometry = geometry;
  f.shared_bytes = shared_bytes;
  f.required_alignment = skinny_alignment;
  return f;
}

}  // namespace tilemm::detail
