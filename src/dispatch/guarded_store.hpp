// The store as every dispatch part reaches it: behind one lock, and each failure turned into one
// warning and the caller's "no answer" (the dispatcher's store-error policy, written once). A
// broken cache never fails a gemm(): the call goes on as if the cache had no answer.
#pragma once

#include <mutex>
#include <string>
#include <utility>

#include "collaborators.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::dispatch {

class GuardedStore {
 public:
  explicit GuardedStore(ResultStore& store) : store_(store) {}
  GuardedStore(const GuardedStore&) = delete;
  GuardedStore& operator=(const GuardedStore&) = delete;

  // Runs `f` on the store under its lock; a tilemm::Error becomes the warning "<failure>: <what>"
  // (none when `failure` is empty) and the answer `otherwise`.
  template <class F, class R>
  R with(const std::string& failure, R otherwise, F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      return f(store_);
    } catch (const Error& e) {
      if (!failure.empty()) detail::log(detail::LogLevel::warn, failure + ": " + e.what());
      return otherwise;
    }
  }

 private:
  ResultStore& store_;
  std::mutex mutex_;
};

}  // namespace tilemm::dispatch
