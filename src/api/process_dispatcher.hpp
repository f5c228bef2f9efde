// The dispatcher of this process, wired to the real cache, kernels and tuner.
#pragma once

#include "dispatcher.hpp"

namespace tilemm::api {

// Made on first use and never destroyed: used until the very end of the process.
dispatch::Dispatcher& process_dispatcher();

}  // namespace tilemm::api
