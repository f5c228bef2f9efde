// The store as every dispatch part reaches it: behind a lock (the callers' connection, and the
// background worker's own), and each failure turned into one warning and the caller's "no answer"
// (the dispatcher's store-error policy, written once). A broken cache never fails a gemm(): the
// call goes on as if the cache had no answer.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "collaborators.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"

namespace tilemm::dispatch {

class GuardedStore {
 public:
  explicit GuardedStore(ResultStore& store) : main_(store) {}
  GuardedStore(const GuardedStore&) = delete;
  GuardedStore& operator=(const GuardedStore&) = delete;

  // While one lives on a thread (the background worker's tuning), that thread reaches the store
  // through a connection of its own (ResultStore::another_connection), behind a lock of its own:
  // a caller's lookup then never waits for the worker's writes, which hold the lock for
  // milliseconds (an entry and its hundreds of candidates). Scopes nest.
  class WorkerScope {
   public:
    WorkerScope() { ++depth(); }
    ~WorkerScope() { --depth(); }
    WorkerScope(const WorkerScope&) = delete;
    WorkerScope& operator=(const WorkerScope&) = delete;
    static bool active() { return depth() > 0; }

   private:
    static int& depth() {
      thread_local int scopes = 0;
      return scopes;
    }
  };

  // Runs `f` on the store under its lock; a tilemm::Error becomes the warning "<failure>: <what>"
  // (none when `failure` is empty) and the answer `otherwise`.
  template <class F, class R>
  R with(const std::string& failure, R otherwise, F&& f) {
    Lane& lane = WorkerScope::active() ? worker_lane() : main_;
    std::lock_guard<std::mutex> lock(lane.mutex);
    try {
      return f(lane.store);
    } catch (const Error& e) {
      if (!failure.empty()) detail::log(detail::LogLevel::warn, failure + ": " + e.what());
      return otherwise;
    }
  }

 private:
  struct Lane {
    explicit Lane(ResultStore& s) : store(s) {}
    ResultStore& store;
    std::mutex mutex;
  };

  // Made at the worker's first call; the main lane where the store has no other connection.
  Lane& worker_lane() {
    std::call_once(worker_made_, [this] {
      std::unique_ptr<ResultStore> other;
      {
        std::lock_guard<std::mutex> lock(main_.mutex);
        try {
          other = main_.store.another_connection();
        } catch (const Error& e) {
          detail::log(detail::LogLevel::warn,
                      std::string("background tuning shares the callers' cache connection: ") +
                          e.what());
        }
      }
      if (other) {
        worker_store_ = std::move(other);
        worker_ = std::make_unique<Lane>(*worker_store_);
      }
    });
    return worker_ ? *worker_ : main_;
  }

  Lane main_;
  std::once_flag worker_made_;
  std::unique_ptr<ResultStore> worker_store_;
  std::unique_ptr<Lane> worker_;
};

}  // namespace tilemm::dispatch
