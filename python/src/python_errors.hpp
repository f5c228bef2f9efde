// tilemm.Error (a RuntimeError) and tilemm.InvalidArgument (a tilemm.Error and a ValueError), and
// the translation of the library's C++ exceptions into them.
#pragma once

#include <nanobind/nanobind.h>

namespace tilemm::python {

// Adds Error and InvalidArgument to `m` and registers the translator: tilemm::InvalidArgument ->
// InvalidArgument, any other tilemm::Error -> Error, with the C++ what() as the message.
void register_exceptions(nanobind::module_& m);

}  // namespace tilemm::python
