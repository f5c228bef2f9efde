// The fleet's Redis store at the cache layer (cache/redis_store.hpp) against a private
// redis-server: keys, values validated like an imported JSON entry, leases, listing, and what a
// failure looks like (a dead server, a wrong password).
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <chrono>
#include <thread>

#include "fake_vendor_provider.hpp"
#include "redis_connection.hpp"
#include "redis_server.hpp"
#include "redis_store.hpp"
#include "row_split.hpp"
#include "sample_entry.hpp"
#include "stored_entry_check.hpp"
#include "tilemm/error.hpp"

namespace tilemm::cache {
namespace {

using testing::RedisServer;
const std::string kH200 = testing::kH200Key;
constexpr std::chrono::milliseconds kTimeout{200};

// Entries of M x 2M x 3 on kH200.
StoredEntry entry(std::int64_t m, const std::string& winner = "tiled_t32_p0") {
  return testing::sample_entry(m, 2 * m, 3, winner, kH200);
}

std::optional<StoredEntry> find(RedisStore& store, const StoredEntry& e) {
  return store.find(e.device_key, e.M, e.N, e.K, e.problem_class, e.precision, e.candidate_set,
                    detail::why_not_a_known_name);
}

// Sets a raw value, as anyone who can write to the store could.
void set_raw(const RedisServer& server, const std::string& key, const std::string& value) {
  RedisConnection c(parse_redis_url(server.url()), kTimeout);
  c.command({"SET", key, value});
}

#define SKIP_WITHOUT_REDIS()                                                  \
  if (const std::string why = testing::why_no_redis_server(); !why.empty()) { \
    GTEST_SKIP() << why;                                                      \
  }

TEST(RedisUrl, ReadsEveryPartAndNeverShowsThePassword) {
  const RedisUrl u = parse_redis_url("redis://fleet:p%40ss@cache.example-1:6380/3");
  EXPECT_EQ(u.user, "fleet");
  EXPECT_EQ(u.password, "p@ss");
  EXPECT_EQ(u.host, "cache.example-1");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 3);
  EXPECT_EQ(u.redacted().find("p@ss"), std::string::npos);
  EXPECT_EQ(parse_redis_url("redis://h:1").db, 0);
  EXPECT_EQ(parse_redis_url("redis://:secret@h:1").password, "secret");
  for (const char* bad : {"http://h:1", "redis://h", "redis://h:0", "redis://h:99999",
                          "redis://:1", "redis://h:1/x", "redis://a:%zz@h:1", "redis://h h:1"}) {
    try {
      parse_redis_url(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "remote cache URL");
      EXPECT_EQ(std::string(e.what()).find("%zz"), std::string::npos);
    }
  }
}

TEST(RedisStore, OneKeyPerShapeClassPrecisionAndDeviceModel) {
  StoredEntry high = entry(64);
  high.precision = Precision::high;
  EXPECT_NE(RedisStore::result_key(entry(64)), RedisStore::result_key(high));
  EXPECT_NE(RedisStore::result_key(entry(64)), RedisStore::result_key(entry(65)));
  EXPECT_EQ(RedisStore::result_key(entry(64)),
            "tilemm:result:" + std::string(kH200) + "|a4-dense|highest|64x128x3");
  // A result of own kernels only has a key of its own; one chosen with vendor candidates keeps
  // the key every result had before candidate sets.
  StoredEntry own = entry(64);
  own.candidate_set = CandidateSet::own_only;
  EXPECT_EQ(RedisStore::result_key(own),
            "tilemm:result:" + std::string(kH200) + "|a4-dense|highest|64x128x3|own_only");
}

// Both candidate sets of a shape live side by side, each read back with its set.
TEST(RedisStore, EachCandidateSetOfAShapeIsItsOwnValue) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  RedisStore store(parse_redis_url(server.url()), kTimeout);
  StoredEntry own = entry(64, "naive");
  own.candidate_set = CandidateSet::own_only;
  store.put_all({entry(64), own});
  const auto with_vendor = find(store, entry(64));
  const auto own_only = find(store, own);
  ASSERT_TRUE(with_vendor && own_only);
  testing::expect_same_entry(*with_vendor, entry(64), testing::CandidateOrder::same);
  testing::expect_same_entry(*own_only, own, testing::CandidateOrder::same);
}

// A value a build before candidate sets published has none: it reads with the set its names
// show, under the key of that set only.
TEST(RedisStore, AValueWithoutACandidateSetReadsWithTheSetItsNamesShow) {
  SKIP_WITHOUT_REDIS();
  detail::register_candidate_provider(std::make_unique<testing::FakeVendorProvider>());
  struct Unregister {
    ~Unregister() { detail::unregister_candidate_provider("fakevendor"); }
  } unregister;
  RedisServer server;
  RedisStore store(parse_redis_url(server.url()), kTimeout);
  const auto old_value = [](StoredEntry e) {
    auto j = entry_to_json(e);
    j.erase("candidate_set");
    return j.dump();
  };
  StoredEntry timed_with_vendor = entry(64);
  timed_with_vendor.candidates[1].variant = "fakevendor_a1";
  set_raw(server, RedisStore::result_key(timed_with_vendor), old_value(timed_with_vendor));
  const auto read = find(store, timed_with_vendor);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->candidate_set, CandidateSet::with_vendor);
  // No vendor name: chosen among own kernels only, so not the value of the with-vendor key.
  set_raw(server, RedisStore::result_key(entry(128)), old_value(entry(128)));
  EXPECT_THROW(find(store, entry(128)), InvalidArgument);
}

TEST(RedisStore, PublishedEntriesComeBackFieldForField) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  RedisStore store(parse_redis_url(server.url()), kTimeout);
  EXPECT_FALSE(find(store, entry(64)));
  store.put_all({entry(64), entry(128, "naive")});
  const auto back = find(store, entry(64));
  ASSERT_TRUE(back);
  testing::expect_same_entry(*back, entry(64), testing::CandidateOrder::same);
  std::vector<StoredEntry> all;
  store.for_each(detail::why_not_a_known_name, [&](StoredEntry&& e) { all.push_back(e); },
                 [](const std::string&, const InvalidArgument&) { FAIL(); });
  EXPECT_EQ(all.size(), 2u);
  EXPECT_EQ(store.clear(), 2);
  EXPECT_FALSE(find(store, entry(64)));
}

TEST(RedisStore, HostileOrCorruptValuesAreRefusedWithTheImportsOwnValidation) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  RedisStore store(parse_redis_url(server.url()), kTimeout);
  const std::string key = RedisStore::result_key(entry(64));
  std::string nested(200000, '[');
  const std::vector<std::pair<std::string, std::string>> values = {
      {"not JSON", "{\"winner\": "},
      {"deeply nested", nested},
      {"too large", std::string(kMaxEntryTextBytes + 1, ' ')},
      {"an array", "[1,2,3]"},
      {"a winner this build does not know",
       entry_to_json(entry(64, "evil_kernel_v9")).dump()},
      {"an entry of another shape", entry_to_json(entry(65)).dump()},
      {"a negative time", [] {
         auto j = entry_to_json(entry(64));
         j["median_ms"] = -1.0;
         return j.dump();
       }()},
      {"no precision", [] {
         auto j = entry_to_json(entry(64));
         j.erase("precision");
         return j.dump();
       }()},
      {"an unknown candidate set", [] {
         auto j = entry_to_json(entry(64));
         j["candidate_set"] = "everything";
         return j.dump();
       }()},
      {"an own-only entry under the key of vendor candidates", [] {
         StoredEntry own = entry(64);
         own.candidate_set = CandidateSet::own_only;
         return entry_to_json(own).dump();
       }()},
  };
  for (const auto& [what, value] : values) {
    set_raw(server, key, value);
    EXPECT_THROW(find(store, entry(64)), InvalidArgument) << what;
  }
  // A listing leaves the bad value out and goes on with the rest.
  store.put_all({entry(128)});
  int refused = 0, listed = 0;
  store.for_each(detail::why_not_a_known_name, [&](StoredEntry&&) { ++listed; },
                 [&](const std::string& k, const InvalidArgument&) {
                   EXPECT_EQ(k, key);
                   ++refused;
                 });
  EXPECT_EQ(listed, 1);
  EXPECT_EQ(refused, 1);
}

TEST(RedisStore, ALeaseHasOneOwnerRenewsAndIsReleasedOnlyByIt) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  RedisStore a(parse_redis_url(server.url()), kTimeout);
  RedisStore b(parse_redis_url(server.url()), kTimeout);
  EXPECT_TRUE(a.try_acquire_lease("k", "node-a", 30));
  EXPECT_TRUE(a.try_acquire_lease("k", "node-a", 30));  // its own: renewed
  EXPECT_FALSE(b.try_acquire_lease("k", "node-b", 30));
  b.release_lease("k", "node-b");  // not its lease: nothing happens
  EXPECT_EQ(a.lease_holder("k"), "node-a");
  EXPECT_FALSE(b.renew_lease("k", "node-b", 30));
  a.release_lease("k", "node-a");
  EXPECT_FALSE(a.lease_holder("k"));
  // A dead owner's lease expires, and another takes it over.
  EXPECT_TRUE(a.try_acquire_lease("k", "node-a", 0.2));
  EXPECT_FALSE(b.try_acquire_lease("k", "node-b", 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_TRUE(b.try_acquire_lease("k", "node-b", 30));
  EXPECT_FALSE(a.renew_lease("k", "node-a", 30));
}

TEST(RedisStore, AWrongPasswordFailsNamingTheCommandNotThePassword) {
  SKIP_WITHOUT_REDIS();
  RedisServer server({"--requirepass", "right-secret"});
  RedisStore wrong(parse_redis_url(server.url(":wrong-secret@")), kTimeout);
  try {
    find(wrong, entry(64));
    FAIL() << "a wrong password was accepted";
  } catch (const InvalidArgument&) {
    FAIL() << "an auth failure is not a bad value";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("AUTH"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("wrong-secret"), std::string::npos) << e.what();
  }
  RedisStore none(parse_redis_url(server.url()), kTimeout);
  EXPECT_THROW(find(none, entry(64)), Error);  // NOAUTH
  RedisStore right(parse_redis_url(server.url(":right-secret@")), kTimeout);
  right.put_all({entry(64)});
  EXPECT_TRUE(find(right, entry(64)));
}

TEST(RedisStore, ADeadServerFailsWithinTheTimeoutAndARestartedOneIsReconnected) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  RedisStore store(parse_redis_url(server.url()), std::chrono::milliseconds(50));
  store.put_all({entry(64)});
  server.stop();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(find(store, entry(64)), Error);
  EXPECT_THROW(find(store, entry(64)), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  server.start();  // empty: no persistence
  EXPECT_FALSE(find(store, entry(64)));
  store.put_all({entry(64)});
  EXPECT_TRUE(find(store, entry(64)));
}

}  // namespace
}  // namespace tilemm::cache
