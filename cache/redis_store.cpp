#include "redis_store.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "tilemm/error.hpp"

namespace tilemm::cache {
namespace {

constexpr const char* kResultPrefix = "tilemm:result:";
constexpr const char* kLeasePrefix = "tilemm:lease:";
constexpr std::size_t kBatch = 1000;

// Compare-and-act on a lease in one step, so that an owner whose lease expired and was taken
// by another never renews or deletes the other's.
constexpr const char* kRenewScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
constexpr const char* kReleaseScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";

std::string milliseconds(double seconds) {
  return std::to_string(std::max<long long>(1, std::llround(seconds * 1000.0)));
}

// The entry must be the one its key names: a value copied under another key is refused.
void check_key(const StoredEntry& e, const std::string& key) {
  if (RedisStore::result_key(e) != key)
    throw InvalidArgument("entry", "is stored under the key of another shape, class, precision, "
                                   "candidate set or device model");
}

StoredEntry validated(const std::string& text, const std::string& key, const NameCheck& names) {
  StoredEntry e = entry_from_json_text(text, names);
  check_key(e, key);
  return e;
}

}  // namespace

RedisStore::RedisStore(RedisUrl url, std::chrono::milliseconds timeout)
    : url_(std::move(url)), timeout_(timeout) {}

std::string RedisStore::result_key(const std::string& device_key, std::int64_t M, std::int64_t N,
                                   std::int64_t K, const std::string& problem_class,
                                   Precision precision, CandidateSet set) {
  std::string key = std::string(kResultPrefix) + device_key + "|" + problem_class + "|" +
                    to_string(precision) + "|" + std::to_string(M) + "x" + std::to_string(N) +
                    "x" + std::to_string(K);
  if (set == CandidateSet::own_only) key += std::string("|") + to_string(set);
  return key;
}

std::string RedisStore::result_key(const StoredEntry& e) {
  return result_key(e.device_key, e.M, e.N, e.K, e.problem_class, e.precision, e.candidate_set);
}

std::string RedisStore::lease_key(const std::string& key) { return kLeasePrefix + key; }

RedisConnection& RedisStore::connection() {
  if (connection_ && connection_->broken()) connection_.reset();
  if (!connection_) connection_ = std::make_unique<RedisConnection>(url_, timeout_);
  return *connection_;
}

RedisReply RedisStore::run(const std::vector<std::string>& args) {
  try {
    return connection().command(args);
  } catch (const Error&) {
    if (connection_ && connection_->broken()) connection_.reset();
    throw;
  }
}

std::optional<StoredEntry> RedisStore::find(const std::string& device_key, std::int64_t M,
                                            std::int64_t N, std::int64_t K,
                                            const std::string& problem_class, Precision precision,
                                            CandidateSet set, const NameCheck& names) {
  const std::string key = result_key(device_key, M, N, K, problem_class, precision, set);
  // At most one byte more than an entry may have, so that a value of any size costs no more to
  // refuse; a missing key reads as "" (no entry is empty).
  std::optional<RedisReply> reply;
  try {
    reply.emplace(run({"GETRANGE", key, "0", std::to_string(kMaxEntryTextBytes)}));
  } catch (const RedisErrorReply& e) {
    // Another type under the key is a bad value of that key, not a store that is down.
    if (e.reply().rfind("WRONGTYPE", 0) == 0)
      throw InvalidArgument("entry", "is not a string value: " + e.reply());
    throw;
  }
  const std::string text = reply->text();
  if (text.empty()) return std::nullopt;
  return validated(text, key, names);
}

void RedisStore::put_all(const std::vector<StoredEntry>& entries) {
  for (std::size_t first = 0; first < entries.size(); first += kBatch) {
    const std::size_t last = std::min(entries.size(), first + kBatch);
    try {
      RedisConnection& c = connection();
      for (std::size_t i = first; i < last; ++i)
        c.append({"SET", result_key(entries[i]), json_text(entry_to_json(entries[i]))});
      for (std::size_t i = first; i < last; ++i) c.reply("SET");
    } catch (const Error&) {
      connection_.reset();  // replies may be left unread: the connection cannot be reused
      throw;
    }
  }
}

void RedisStore::for_each(
    const NameCheck& names, const std::function<void(StoredEntry&&)>& each,
    const std::function<void(const std::string&, const InvalidArgument&)>& refused) {
  std::string cursor = "0";
  do {
    const RedisReply page =
        run({"SCAN", cursor, "MATCH", std::string(kResultPrefix) + "*", "COUNT", "1000"});
    if (!page.is_array() || page.size() != 2)
      throw Error(ErrorKind::cache, "tilemm: redis SCAN: unexpected reply");
    cursor = RedisReply::text_of(page.element(0));
    const redisReply* keys = page.element(1);
    std::vector<std::string> batch;
    for (std::size_t i = 0; i < keys->elements; ++i) batch.push_back(RedisReply::text_of(keys->element[i]));
    if (batch.empty()) continue;
    std::vector<std::string> mget = {"MGET"};
    mget.insert(mget.end(), batch.begin(), batch.end());
    const RedisReply values = run(mget);
    for (std::size_t i = 0; i < batch.size() && i < values.size(); ++i) {
      if (RedisReply::is_nil(values.element(i))) continue;  // removed since the SCAN
      StoredEntry e;
      try {
        e = validated(RedisReply::text_of(values.element(i)), batch[i], names);
      } catch (const InvalidArgument& why) {
        refused(batch[i], why);
        continue;
      }
      each(std::move(e));
    }
  } while (cursor != "0");
}

std::int64_t RedisStore::clear() {
  std::int64_t removed = 0;
  std::string cursor = "0";
  do {
    const RedisReply page =
        run({"SCAN", cursor, "MATCH", std::string(kResultPrefix) + "*", "COUNT", "1000"});
    cursor = RedisReply::text_of(page.element(0));
    const redisReply* keys = page.element(1);
    if (keys->elements == 0) continue;
    std::vector<std::string> del = {"DEL"};
    for (std::size_t i = 0; i < keys->elements; ++i) del.push_back(RedisReply::text_of(keys->element[i]));
    removed += run(del).integer();
  } while (cursor != "0");
  return removed;
}

bool RedisStore::try_acquire_lease(const std::string& key, const std::string& owner,
                                   double ttl_seconds) {
  const std::string lease = lease_key(key);
  if (!run({"SET", lease, owner, "NX", "PX", milliseconds(ttl_seconds)}).is_nil()) return true;
  return renew_lease(key, owner, ttl_seconds);
}

bool RedisStore::renew_lease(const std::string& key, const std::string& owner, double ttl_seconds) {
  return run({"EVAL", kRenewScript, "1", lease_key(key), owner, milliseconds(ttl_seconds)})
             .integer() == 1;
}

void RedisStore::release_lease(const std::string& key, const std::string& owner) {
  run({"EVAL", kReleaseScript, "1", lease_key(key), owner});
}

std::optional<std::string> RedisStore::lease_holder(const std::string& key) {
  const RedisReply reply = run({"GET", lease_key(key)});
  if (reply.is_nil()) return std::nullopt;
  return reply.text();
}

}  // namespace tilemm::cache
