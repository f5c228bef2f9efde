// The one rule for a GEMM dimension (M, N or K), shared by every entry point.
#pragma once

#include <cstdint>

namespace tilemm::detail {

// Throws InvalidArgument naming `name` when `value` is negative or above the largest dimension
// tilemm supports (2^31 - 1, what the kernels index with).
void check_dimension(const char* name, std::int64_t value);

}  // namespace tilemm::detail
