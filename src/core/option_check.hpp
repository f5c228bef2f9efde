// The rule for a call's Options, shared by every entry point that takes them.
#pragma once

#include "tilemm/autotune.hpp"

namespace tilemm::detail {

// Throws InvalidArgument naming the field of `options` that holds no valid value: a tuning
// budget below 0 or not finite, or a precision or policy outside its enum.
void check_options(const Options& options);

}  // namespace tilemm::detail
