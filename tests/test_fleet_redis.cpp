// The dispatcher with the real fleet store on a private redis-server: processes with separate
// local caches sharing it, a hostile value, the server killed and restarted mid-run, a wrong
// password. Skipped where there is no redis-server.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dispatch_fakes.hpp"
#include "provenance.hpp"
#include "redis_connection.hpp"
#include "redis_remote_store.hpp"
#include "redis_server.hpp"
#include "redis_store.hpp"
#include "shape_key.hpp"

namespace tilemm::dispatch {
namespace {

using testing::FleetProcess;
using testing::fake_device;
using testing::RedisServer;
using Clock = std::chrono::steady_clock;

#define SKIP_WITHOUT_REDIS()                                                  \
  if (const std::string why = testing::why_no_redis_server(); !why.empty()) { \
    GTEST_SKIP() << why;                                                      \
  }

RemoteTimes quick_retry() {
  RemoteTimes t;
  t.first_retry = std::chrono::milliseconds(200);
  t.max_retry = std::chrono::milliseconds(400);
  return t;
}

auto redis_opener(RemoteTimes times = quick_retry()) {
  return [times](const std::string& url) { return open_redis_store(url, times); };
}

std::optional<cache::StoredEntry> in_redis(const RedisServer& server, const Problem& p) {
  cache::RedisStore store(cache::parse_redis_url(server.url()), std::chrono::milliseconds(500));
  return store.find(fake_device().model_key(), p.M, p.N, p.K, class_of(p), p.precision,
                    candidate_set_of(p),
                    [](const std::string&, const detail::StoredName&) { return std::string(); });
}

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  pclose(pipe);
  return output;
}

TEST(FleetRedis, ProcessesWithSeparateCachesMissingTheSameShapeAtOnceTuneItOnce) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  const int processes = 4;
  std::string command;
  for (int i = 0; i < processes; ++i)
    command += std::string(i ? " & " : "( ") + TILEMM_FLEET_CHILD + " " + server.url() +
               " 320x448x64 400";
  command += " ; wait ) 2>&1";
  const std::string output = run(command);
  int tunings = 0, lines = 0, remote = 0;
  for (std::size_t at = output.find("tunings="); at != std::string::npos;
       at = output.find("tunings=", at + 1)) {
    tunings += std::atoi(output.c_str() + at + 8);
    ++lines;
  }
  for (std::size_t at = output.find("source=remote"); at != std::string::npos;
       at = output.find("source=remote", at + 1))
    ++remote;
  EXPECT_EQ(lines, processes) << output;
  EXPECT_EQ(tunings, 1) << output;
  EXPECT_EQ(remote, processes - 1) << output;
  EXPECT_TRUE(in_redis(server, Problem::dense(320, 448, 64, 4)));
  // A late process with an empty cache is served without tuning.
  EXPECT_NE(run(std::string(TILEMM_FLEET_CHILD) + " " + server.url() + " 320x448x64 400")
                .find("tunings=0 source=remote"),
            std::string::npos);
}

TEST(FleetRedis, AHostileValueIsRefusedAndNeverReachesTheLocalCache) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  const Problem p = Problem::dense(256, 256, 256, 4);
  const std::string key = cache::RedisStore::result_key(fake_device().model_key(), p.M, p.N, p.K,
                                                        class_of(p), p.precision,
                                                        candidate_set_of(p));
  const std::vector<std::vector<std::string>> plants = {
      {"SET", key, "{\"winner\":\"naive\""},
      {"SET", key, std::string(1000000, '{')},
      {"SET", key, "{\"device_key\":\"x\"}"},
      {"SET", key, std::string(std::size_t{5} << 20, ' ')},  // over the size of an entry
      {"RPUSH", key, "x"}};  // not a string: a bad value, not a store that is down
  for (const auto& plant : plants) {
    cache::RedisConnection planter(cache::parse_redis_url(server.url()), std::chrono::milliseconds(500));
    planter.command({"DEL", key});
    planter.command(plant);
    FleetProcess node("node-a", redis_opener());
    ::testing::internal::CaptureStderr();
    const AutotuneResult r = node.autotune(p, server.url());
    const std::string log = ::testing::internal::GetCapturedStderr();
    SCOPED_TRACE(plant[0] + " of " + std::to_string(plant.back().size()) + " bytes");
    EXPECT_EQ(r.source, ResultSource::tuned);
    EXPECT_EQ(node.tuner->tunings, 1);
    EXPECT_NE(log.find("not a valid entry"), std::string::npos) << log;
    EXPECT_EQ(log.find("unavailable"), std::string::npos) << log;
    ASSERT_EQ(node.local->entries.size(), 1u);
    EXPECT_EQ(node.local->entries.begin()->second.source, "tuned");  // its own, not the value
    // Its tuning replaced the bad value.
    EXPECT_TRUE(in_redis(server, p));
  }
}

TEST(FleetRedis, ADeadServerCostsAtMostTheTimeoutAndARestartedOneIsUsedAgain) {
  SKIP_WITHOUT_REDIS();
  RedisServer server;
  FleetProcess node("node-a", redis_opener());
  const std::string url = server.url();
  EXPECT_EQ(node.autotune(Problem::dense(64, 64, 64, 4), url).source, ResultSource::tuned);
  server.stop();
  ::testing::internal::CaptureStderr();
  // Each call misses the local cache, finds the store dead (within its 50 ms per operation), and
  // is served by a local tuning; after the first failure the store is not asked at all.
  for (std::int64_t m : {96, 128, 160, 192}) {
    const auto start = Clock::now();
    EXPECT_EQ(node.autotune(Problem::dense(m, 64, 64, 4), url).source, ResultSource::tuned);
    EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(300));
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  std::size_t warnings = 0;
  for (std::size_t at = log.find("unavailable"); at != std::string::npos;
       at = log.find("unavailable", at + 1))
    ++warnings;
  EXPECT_LE(warnings, 1u) << log;  // once per process (0: an earlier test of this process warned)
  EXPECT_EQ(node.local->entries.size(), 5u);  // nothing local lost
  server.start();  // empty: a restart without persistence also flushes
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past the back-off
  const Problem after = Problem::dense(224, 64, 64, 4);
  EXPECT_EQ(node.autotune(after, url).source, ResultSource::tuned);
  EXPECT_TRUE(in_redis(server, after));  // published again: reconnected on its own
}

TEST(FleetRedis, ASlowServerCostsACallAtMostTheTimeout) {
  SKIP_WITHOUT_REDIS();
  RedisServer server({"--enable-debug-command", "yes"});
  FleetProcess node("node-a", redis_opener());
  // Another client makes the server sleep for 3 s: every command waits behind it. The call must
  // end long before (its operations time out), with room for a loaded machine (a sanitizer
  // build beside other tests).
  std::thread sleeper([&] {
    cache::RedisConnection c(cache::parse_redis_url(server.url()), std::chrono::milliseconds(5000));
    c.command({"DEBUG", "SLEEP", "3"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = Clock::now();
  EXPECT_EQ(node.autotune(Problem::dense(640, 64, 64, 4), server.url()).source, ResultSource::tuned);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
  sleeper.join();
}

TEST(FleetRedis, AWrongPasswordLeavesCallsToTheLocalPath) {
  SKIP_WITHOUT_REDIS();
  RedisServer server({"--requirepass", "fleet-secret"});
  FleetProcess node("node-a", redis_opener());
  const Problem p = Problem::dense(512, 128, 64, 4);
  EXPECT_EQ(node.autotune(p, server.url(":not-the-secret@")).source, ResultSource::tuned);
  FleetProcess authorized("node-b", redis_opener());
  EXPECT_EQ(authorized.autotune(p, server.url(":fleet-secret@")).source, ResultSource::tuned);
  FleetProcess reader("node-c", redis_opener());
  EXPECT_EQ(reader.autotune(p, server.url(":fleet-secret@")).source, ResultSource::remote);
}

}  // namespace
}  // namespace tilemm::dispatch
