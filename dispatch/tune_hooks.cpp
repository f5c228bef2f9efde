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
}  // namespace tilemm::detail
