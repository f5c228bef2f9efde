#include "tune_hooks.hpp"

namespace tilemm::detail {
namespace {
thread_local const TuneHooks* installed_hooks = nullptr;
}
const TuneHooks* current_tune_hooks() { return installed_hooks; }
ScopedTuneHooks::ScopedTuneHooks(const TuneHooks& hooks) : previous_(installed_hooks) {
  installed_hooks = &hooks;
}
ScopedTuneHooks::~ScopedTuneHooks() { installed_hooks = previous_; }
void stop_if_requested(const TuneHooks* hooks) {
  if (hooks != nullptr && hooks->stop_requested && hooks->stop_requested()) throw TuningStopped();
}
}  // namespace tilemm::detail
