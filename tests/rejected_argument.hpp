// What argument a call is refused for, for the tests of the entry points' checks.
#pragma once

#include <functional>
#include <string>

#include "tilemm/error.hpp"

namespace tilemm::testing {

// The argument() of the InvalidArgument that `call` throws, or "<accepted>" when it throws none.
inline std::string rejected_argument(const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "<accepted>";
}

}  // namespace tilemm::testing
