#include "tune_hooks.hpp"

namespace tilemm::detail {
void stop_if_requested(const TuneHooks* hooks) {
  if (hooks != nullptr && hooks->stop_requested && hooks->stop_requested()) throw TuningStopped();
}
}  // namespace tilemm::detail
