#include "split_k_rule.hpp"

#include <cstdint>

#include "family_registry.hpp"

namespace tilemm::detail {

std::string split_k_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p) {
  // Below this much of K per slice, a slice's tile loads are not amortized.
  constexpr std::int64_t kMinKPerSlice = 64;
  const int splits = v.param("s");
  const LaunchGeometry g = find_family(v.family).geometry(v, p);
  const std::uint64_t tiles = g.grid_x64 * g.grid_y64;
  if (device.sm_count > 0 && tiles >= static_cast<std::uint64_t>(device.sm_count))
    return "its " + std::to_string(tiles) + " tiles already give each of the " +
           std::to_string(device.sm_count) + " SMs a block without splitting K";
  if (p.K / splits < kMinKPerSlice)
    return "K = " + std::to_string(p.K) + " in " + std::to_string(splits) +
           " slices leaves under " + std::to_string(kMinKPerSlice) + " per slice";
  return {};
}

}  // namespace tilemm::detail
