#include "split_k_worth.hpp"

#include <cmath>

#include "family_registry.hpp"

namespace tilemm::detail {

std::string unsplit_grid_fills_the_sms(std::uint64_t tiles, int sm_count) {
  if (sm_count <= 0 || tiles < static_cast<std::uint64_t>(sm_count)) return {};
  const double fill = wave_fill(tiles, sm_count);
  if (fill < kUnsplitWaveFill) return {};
  return "its " + std::to_string(tiles) + " tiles already give each of the " +
         std::to_string(sm_count) + " SMs a block, in waves " +
         std::to_string(static_cast<int>(std::floor(fill * 100))) + "% full, without splitting K";
}

}  // namespace tilemm::detail
