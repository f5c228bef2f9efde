// Calls that must not wait for a vendor library. Under TunePolicy::background a caller's gemm()
// never loads cuBLASLt or cuBLAS, creates their handles or prepares their algorithms: each costs
// tens of milliseconds the first time, and the background worker does it instead. A vendor
// provider asked, on a thread inside a NoWaitScope, for something it has not made yet throws
// WouldWait; the dispatcher catches it, runs the fallback and queues the shape for the worker.
#pragma once

#include <mutex>
#include <string>
#include <utility>

namespace tilemm::detail {

// Not a tilemm::Error, so that no handler of a library error takes it for a failure.
class WouldWait {
 public:
  explicit WouldWait(std::string what) : what_(std::move(what)) {}
  const std::string& what() const { return what_; }

 private:
  std::string what_;
};

// Marks the current thread as one that must not wait, for its lifetime; nests.
class NoWaitScope {
 public:
  NoWaitScope();
  ~NoWaitScope();
  NoWaitScope(const NoWaitScope&) = delete;
  NoWaitScope& operator=(const NoWaitScope&) = delete;
};

// Whether the current thread is inside a NoWaitScope.
bool waits_refused();

// Throws WouldWait(`what`: the work it would wait for) inside a NoWaitScope; nothing outside.
void refuse_wait(const std::string& what);

// `mutex` locked. Inside a NoWaitScope only where it is free at once: held by another thread
// (preparing what the caller asks for, say), it throws WouldWait(`what`).
template <class Mutex>
std::unique_lock<Mutex> lock_unless_refused(Mutex& mutex, const std::string& what) {
  if (!waits_refused()) return std::unique_lock<Mutex>(mutex);
  std::unique_lock<Mutex> lock(mutex, std::try_to_lock);
  if (!lock.owns_lock()) throw WouldWait(what);
  return lock;
}

}  // namespace tilemm::detail
