// The fleet's store of tuning results on Redis (docs/fleet.md): one key per (device model,
// problem class, precision, M, N, K, candidate set) whose value is one entry of the JSON exchange format
// (json_entry.hpp), and the tuning leases of the fleet. Results only: no CUBIN is ever written
// or read here. Every value read is validated by the JSON import's own reader.
//
// Not thread-safe (one hiredis connection); every failure throws: tilemm::Error for the
// connection or a command (the connection is dropped and made again on the next call), and
// InvalidArgument for a value that is not a valid entry of its key.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json_entry.hpp"
#include "redis_connection.hpp"
#include "redis_url.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

class RedisStore {
 public:
  // Connects on first use. `timeout` bounds the connect and each command's wait.
  RedisStore(RedisUrl url, std::chrono::milliseconds timeout);

  const RedisUrl& url() const { return url_; }

  // "tilemm:result:<device_key>|<class>|<precision>|<M>x<N>x<K>" for a result chosen with
  // vendor candidates (the key of every result before candidate sets), the same with "|own_only"
  // appended for one chosen among own kernels only.
  static std::string result_key(const std::string& device_key, std::int64_t M, std::int64_t N,
                                std::int64_t K, const std::string& problem_class,
                                Precision precision, CandidateSet set);
  static std::string result_key(const StoredEntry& e);
  // "tilemm:lease:<key>", for the dispatcher's lease key (device model and shape).
  static std::string lease_key(const std::string& key);

  // The entry of this key: one GET, validated (InvalidArgument when the value is not a valid
  // entry, or an entry of another key, its candidate set included).
  std::optional<StoredEntry> find(const std::string& device_key, std::int64_t M, std::int64_t N,
                                  std::int64_t K, const std::string& problem_class,
                                  Precision precision, CandidateSet set, const NameCheck& names);
  // SET of each entry under its key (pipelined: one round trip per batch of 1000).
  void put_all(const std::vector<StoredEntry>& entries);
  // Every entry (SCAN over the result keys, then GET in batches), in no particular order; a
  // value that is not valid goes to `refused` with its key and why, and the walk goes on.
  void for_each(const NameCheck& names, const std::function<void(StoredEntry&&)>& each,
                const std::function<void(const std::string& key, const InvalidArgument& why)>& refused);
  // Removes every result key; returns how many.
  std::int64_t clear();

  // SET lease NX PX ttl; when `owner` holds it already, its expiry is renewed instead. True when
  // `owner` holds the lease afterwards.
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl_seconds);
  // Renews the expiry if `owner` still holds the lease (compare-and-PEXPIRE in one script);
  // false when it does not (it expired, or Redis was flushed or restarted).
  bool renew_lease(const std::string& key, const std::string& owner, double ttl_seconds);
  // Deletes the lease if `owner` holds it (compare-and-delete in one script).
  void release_lease(const std::string& key, const std::string& owner);
  // Who holds the lease, if anyone.
  std::optional<std::string> lease_holder(const std::string& key);

  // Drops the connection (after a failure the caller wants retried later).
  void disconnect() { connection_.reset(); }

 private:
  RedisConnection& connection();
  RedisReply run(const std::vector<std::string>& args);

  RedisUrl url_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<RedisConnection> connection_;
};

}  // namespace tilemm::cache
