#include "no_wait.hpp"

namespace tilemm::detail {
namespace {
thread_local int no_wait_depth = 0;
}  // namespace

NoWaitScope::NoWaitScope() { ++no_wait_depth; }
NoWaitScope::~NoWaitScope() { --no_wait_depth; }

bool waits_refused() { return no_wait_depth > 0; }

void refuse_wait(const std::string& what) {
  if (waits_refused()) throw WouldWait(what);
}

}  // namespace tilemm::detail
