#include "redis_remote_store.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>

#include "log.hpp"
#include "redis_store.hpp"
#include "row_split.hpp"
#include "tilemm/error.hpp"

namespace tilemm::dispatch {
namespace {

using detail::log;
using detail::LogLevel;
using Clock = std::chrono::steady_clock;

// Once per process, whatever the number of stores or dispatchers: the user needs to hear that
// the fleet is out of reach, not how often.
std::atomic<bool> unavailable_warned{false};

class RedisRemoteStore : public RemoteStore {
 public:
  RedisRemoteStore(cache::RedisUrl url, RemoteTimes times)
      : store_(std::move(url), times.timeout), times_(times), retry_after_(times.first_retry) {}

  std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                         const std::string& problem_class,
                                         cache::CandidateSet set) override {
    return guarded(std::optional<cache::StoredEntry>{}, [&]() -> std::optional<cache::StoredEntry> {
      try {
        return store_.find(device_key, p.M, p.N, p.K, problem_class, p.precision, set,
                           detail::why_not_a_known_name);
      } catch (const InvalidArgument& bad) {
        refuse(cache::RedisStore::result_key(device_key, p.M, p.N, p.K, problem_class, p.precision,
                                             set),
               bad);
        return std::nullopt;
      }
    });
  }
  void publish(const std::vector<cache::StoredEntry>& entries) override {
    guarded(false, [&] {
      store_.put_all(entries);
      return true;
    });
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    return guarded(true, [&] { return store_.try_acquire_lease(key, owner, ttl); });
  }
  void renew_lease(const std::string& key, const std::string& owner, double ttl) override {
    guarded(false, [&] { return store_.renew_lease(key, owner, ttl); });
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    guarded(false, [&] {
      store_.release_lease(key, owner);
      return true;
    });
  }

 private:
  // Runs `f` on the store unless it is backing off; a failure answers `otherwise`.
  template <class R, class F>
  R guarded(R otherwise, F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (Clock::now() < next_attempt_) return otherwise;
    try {
      R answer = f();
      if (failing_) {
        failing_ = false;
        retry_after_ = times_.first_retry;
        log(LogLevel::info, "the fleet's store " + store_.url().redacted() + " is reachable again");
      }
      return answer;
    } catch (const InvalidArgument&) {
      throw;  // not a failure of the store
    } catch (const Error& e) {
      store_.disconnect();
      failing_ = true;
      next_attempt_ = Clock::now() + retry_after_;
      retry_after_ = std::min(retry_after_ * 2, times_.max_retry);
      if (!unavailable_warned.exchange(true))
        log(LogLevel::warn, "the fleet's store " + store_.url().redacted() + " is unavailable (" +
                                e.what() + "): calls are served from this machine (its cache, "
                                "the preloaded results, the fallback or a tuning here) and the "
                                "store is tried again later");
      return otherwise;
    }
  }

  void refuse(const std::string& key, const InvalidArgument& bad) {
    if (!refused_.insert(key).second) return;
    log(LogLevel::warn, "the fleet's store " + store_.url().redacted() + " holds a value under '" +
                            key + "' that is not a valid entry, refused: " + bad.what());
  }

  std::mutex mutex_;  // one hiredis connection: one command at a time
  cache::RedisStore store_;
  RemoteTimes times_;
  bool failing_ = false;
  Clock::time_point next_attempt_{};
  std::chrono::milliseconds retry_after_;
  std::set<std::string> refused_;
};

}  // namespace

std::chrono::milliseconds remote_timeout_from_environment() {
  static const std::chrono::milliseconds timeout = [] {
    const std::chrono::milliseconds fallback{50};
    const char* value = std::getenv("TILEMM_REMOTE_TIMEOUT_MS");
    if (value == nullptr) return fallback;
    char* end = nullptr;
    const long ms = std::strtol(value, &end, 10);
    if (end == value || *end != '\0' || ms < 1 || ms > 60000) {
      log(LogLevel::warn, std::string("TILEMM_REMOTE_TIMEOUT_MS='") + value +
                              "' is not a whole number of milliseconds in [1, 60000]; using 50");
      return fallback;
    }
    return std::chrono::milliseconds(ms);
  }();
  return timeout;
}

std::unique_ptr<RemoteStore> open_redis_store(const std::string& url, RemoteTimes times) {
  return std::make_unique<RedisRemoteStore>(cache::parse_redis_url(url), times);
}

}  // namespace tilemm::dispatch
