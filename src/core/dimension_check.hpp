// The rules for a GEMM's dimensions and for how far its operands reach in memory, shared by every
// entry point, so that each is checked once, on the caller's names, before anything runs.
#pragma once

#include <cstdint>
#include <string>

namespace tilemm::detail {

// Throws InvalidArgument naming `name` when `value` is negative or above the largest dimension
// tilemm supports (2^31 - 1, what the kernels index with).
void check_dimension(const char* name, std::int64_t value);

// Throws InvalidArgument naming `name`, a leading dimension, when `rows` rows of `matrix` that
// far apart would reach 2^61 floats: kernels and copies form byte offsets in 64 bits.
void check_reach(const char* name, std::int64_t ld, std::int64_t rows, const std::string& matrix);

// Floats spanned by `rows` rows of `cols` floats, `ld` apart: (rows - 1) * ld + cols, 0 when
// empty. Call it after check_reach accepted `ld` and `rows`.
std::int64_t span_of(std::int64_t rows, std::int64_t cols, std::int64_t ld);

// Throws InvalidArgument naming `name`, a batch stride, when `count` operands of `span` floats,
// `stride` apart, would reach 2^61 floats.
void check_batch_reach(const char* name, std::int64_t stride, std::int64_t count,
                       std::int64_t span, const std::string& matrix);

}  // namespace tilemm::detail
