// The dispatcher of the default context (tilemm/context.hpp), wired to the real cache, kernels
// and tuner.
#pragma once

#include "dispatcher.hpp"

namespace tilemm::api {

// default_context().dispatcher(): made on first use and never destroyed.
dispatch::Dispatcher& process_dispatcher();

}  // namespace tilemm::api
