#include "timing_method.hpp"

#include <algorithm>
#include <cmath>

namespace tilemm::tuner {
namespace {

// Rotated: enough copies of the inputs that rotating through them streams from HBM, not the L2.
// (A rotated set is over half the L2, so this takes a few sets at most.)
constexpr double kL2Multiple = 3.0;
constexpr std::size_t kMaxRotationBytes = std::size_t{2} << 30;

std::uint64_t u(std::int64_t x) { return static_cast<std::uint64_t>(std::max<std::int64_t>(x, 0)); }

}  // namespace

const char* input_mode_name(InputMode mode) {
  return mode == InputMode::same_buffers ? "same buffers" : "rotated";
}

std::uint64_t working_set_bytes(const Problem& p) {
  return (u(p.M) * u(p.K) + u(p.K) * u(p.N) + u(p.M) * u(p.N)) * sizeof(float);
}

InputMode input_mode(const Problem& problem, std::uint64_t l2_bytes) {
  const bool fits = l2_bytes > 0 && working_set_bytes(problem) <= l2_bytes / 2;
  return fits ? InputMode::same_buffers : InputMode::rotated;
}

int timing_method_version(InputMode mode) {
  return mode == InputMode::same_buffers ? kSameBuffersTimingMethodVersion
                                         : kRotatedTimingMethodVersion;
}

std::size_t input_set_count(const Problem& p, std::uint64_t l2_bytes) {
  return input_mode(p, l2_bytes) == InputMode::same_buffers ? 1 : rotated_set_count(p, l2_bytes);
}

std::size_t rotated_set_count(const Problem& p, std::uint64_t l2_bytes) {
  const std::size_t set_bytes =
      std::max<std::size_t>((u(p.M) * u(p.lda) + u(p.K) * u(p.ldb) + u(p.M) * u(p.ldc)) * sizeof(float), 1);
  std::size_t sets = static_cast<std::size_t>(
      std::ceil(kL2Multiple * static_cast<double>(l2_bytes) / static_cast<double>(set_bytes)));
  return std::max<std::size_t>(1, std::min(sets, kMaxRotationBytes / set_bytes));
}

}  // namespace tilemm::tuner
