// The dispatcher with a fleet store (docs/fleet.md): on the CPU, with the fleet's store in memory
// (a fake RemoteStore) and then with a private redis-server, and several processes
// (fleet_child) with separate local caches sharing one Redis.
#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

#include "dispatch_fakes.hpp"
#include "fake_vendor_provider.hpp"
#include "redis_connection.hpp"
#include "redis_remote_store.hpp"
#include "redis_server.hpp"
#include "redis_store.hpp"
#include "resolution.hpp"
#include "shape_key.hpp"

namespace tilemm::dispatch {
namespace {

using testing::FleetProcess;
using testing::fake_device;

// The fleet's store in memory, shared by every RemoteStore opened on it.
struct Fleet {
  std::mutex mutex;
  std::map<std::string, cache::StoredEntry> results;
  std::map<std::string, std::string> leases;
  bool down = false;
  int publications = 0;
};

class MemoryRemote : public RemoteStore {
 public:
  explicit MemoryRemote(Fleet& fleet) : fleet_(fleet) {}
  std::optional<cache::StoredEntry> find(const std::string& device_key, const Problem& p,
                                         const std::string& c, cache::CandidateSet set) override {
    std::lock_guard<std::mutex> lock(fleet_.mutex);
    const auto it = fleet_.results.find(
        cache::RedisStore::result_key(device_key, p.M, p.N, p.K, c, p.precision, set));
    if (fleet_.down || it == fleet_.results.end()) return std::nullopt;
    return it->second;
  }
  void publish(const std::vector<cache::StoredEntry>& entries) override {
    std::lock_guard<std::mutex> lock(fleet_.mutex);
    if (fleet_.down) return;
    ++fleet_.publications;
    for (const auto& e : entries) fleet_.results[cache::RedisStore::result_key(e)] = e;
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double) override {
    std::lock_guard<std::mutex> lock(fleet_.mutex);
    if (fleet_.down) return true;
    auto [it, added] = fleet_.leases.emplace(key, owner);
    return added || it->second == owner;
  }
  void renew_lease(const std::string&, const std::string&, double) override {}
  void release_lease(const std::string& key, const std::string& owner) override {
    std::lock_guard<std::mutex> lock(fleet_.mutex);
    if (fleet_.leases.count(key) && fleet_.leases[key] == owner) fleet_.leases.erase(key);
  }

 private:
  Fleet& fleet_;
};

auto opener(Fleet& fleet) {
  return [&fleet](const std::string&) { return std::make_unique<MemoryRemote>(fleet); };
}

const Problem kShape = Problem::dense(384, 640, 96, 4);
constexpr const char* kUrl = "redis://fleet:1";

TEST(FleetDispatch, TheFleetsStoreIsAskedAfterTheLocalCacheAndBeforeThePreloadedResults) {
  const auto at = [](Source s) {
    return std::find(kResolutionOrder.begin(), kResolutionOrder.end(), s) - kResolutionOrder.begin();
  };
  EXPECT_LT(at(Source::cache), at(Source::remote));
  EXPECT_LT(at(Source::remote), at(Source::preloaded));
  EXPECT_FALSE(may_answer(Source::remote, Call{TunePolicy::tune_on_miss, true, true}));
}

TEST(FleetDispatch, AResultTunedAnywhereServesEveryOtherProcessAndIsCopiedLocallyOnFirstUse) {
  Fleet fleet;
  FleetProcess a("node-a", opener(fleet)), b("node-b", opener(fleet));
  EXPECT_EQ(a.autotune(kShape, kUrl).source, ResultSource::tuned);
  EXPECT_EQ(fleet.publications, 1);
  const auto& published = fleet.results.begin()->second;
  EXPECT_EQ(published.versions.driver_version, fake_device().driver_version);
  EXPECT_EQ(published.versions.template_hash, running_versions(fake_device(), kShape).template_hash);
  const AutotuneResult served = b.autotune(kShape, kUrl);
  EXPECT_EQ(served.source, ResultSource::remote);
  EXPECT_EQ(served.winner, "tiled_t16_p0");
  EXPECT_EQ(b.tuner->tunings, 0);
  EXPECT_EQ(b.local->entries.size(), 1u);
  // The next lookup is the local cache's: the copy is an imported result.
  EXPECT_EQ(b.autotune(kShape, kUrl).source, ResultSource::imported);
}

// The fleet keeps a result of own kernels only under a key of its own: it serves the nodes of own
// kernels only, never a node that allows vendor candidates, which tunes the shape with them and
// publishes that beside it.
TEST(FleetDispatch, AnOwnOnlyResultServesOnlyNodesOfOwnKernels) {
  detail::register_candidate_provider(std::make_unique<testing::FakeVendorProvider>());
  struct Unregister {
    ~Unregister() { detail::unregister_candidate_provider("fakevendor"); }
  } unregister;
  Problem own = kShape;
  own.vendor = false;
  Fleet fleet;
  FleetProcess a("node-a", opener(fleet)), b("node-b", opener(fleet)), c("node-c", opener(fleet));
  EXPECT_EQ(a.autotune(own, kUrl).source, ResultSource::tuned);
  ASSERT_EQ(fleet.results.size(), 1u);
  EXPECT_EQ(fleet.results.begin()->second.candidate_set, cache::CandidateSet::own_only);
  EXPECT_EQ(b.autotune(kShape, kUrl).source, ResultSource::tuned);
  EXPECT_EQ(fleet.results.size(), 2u);  // beside it
  EXPECT_EQ(c.autotune(own, kUrl).source, ResultSource::remote);
  EXPECT_EQ(c.local->entries.begin()->second.candidate_set, cache::CandidateSet::own_only);
  EXPECT_EQ(c.tuner->tunings, 0);
}

TEST(FleetDispatch, AStaleFleetResultIsNotServedAndIsReplacedByANewTuning) {
  Fleet fleet;
  FleetProcess a("node-a", opener(fleet)), b("node-b", opener(fleet));
  a.autotune(kShape, kUrl);
  fleet.results.begin()->second.versions.driver_version = 1;  // tuned under another driver
  EXPECT_EQ(b.autotune(kShape, kUrl).source, ResultSource::tuned);
  EXPECT_EQ(b.tuner->tunings, 1);
  EXPECT_EQ(fleet.results.begin()->second.versions.driver_version, fake_device().driver_version);
}

TEST(FleetDispatch, OfManyProcessesMissingTheSameShapeAtOnceOneTunes) {
  Fleet fleet;
  LeaseTimes times;
  times.poll = std::chrono::milliseconds(5);
  std::vector<std::unique_ptr<FleetProcess>> nodes;
  for (int i = 0; i < 6; ++i)
    nodes.push_back(std::make_unique<FleetProcess>("node-" + std::to_string(i), opener(fleet),
                                                   std::chrono::milliseconds(200), times));
  std::vector<std::thread> threads;
  std::vector<ResultSource> sources(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    threads.emplace_back([&, i] { sources[i] = nodes[i]->autotune(kShape, kUrl).source; });
  for (auto& t : threads) t.join();
  int tunings = 0;
  for (const auto& n : nodes) tunings += n->tuner->tunings;
  EXPECT_EQ(tunings, 1);
  EXPECT_EQ(std::count(sources.begin(), sources.end(), ResultSource::tuned), 1);
  EXPECT_EQ(std::count(sources.begin(), sources.end(), ResultSource::remote), 5);
}

TEST(FleetDispatch, UnderTheBackgroundPolicyCallersRunTheFallbackWhileAnotherNodeTunes) {
  Fleet fleet_of_a, elsewhere;
  Fleet& fleet = elsewhere;
  FleetProcess a("node-a", opener(fleet_of_a));
  fleet.leases[tuning_lease_key(fake_device(), kShape)] = "node-elsewhere";
  LeaseTimes quick;
  quick.poll = std::chrono::milliseconds(5);
  FleetProcess c("node-c", opener(fleet), std::chrono::milliseconds(0), quick);
  EXPECT_EQ(c.autotune(kShape, kUrl, TunePolicy::background).source, ResultSource::fallback);
  // The other node finishes: its result is published and its lease released.
  EXPECT_EQ(a.autotune(kShape, kUrl).source, ResultSource::tuned);
  {
    std::lock_guard<std::mutex> lock(fleet.mutex);
    elsewhere.results = fleet_of_a.results;
    elsewhere.leases.clear();
  }
  c.dispatcher->wait_for_background_tunings();
  EXPECT_EQ(c.tuner->tunings, 0);  // the worker used the published winner
  EXPECT_EQ(c.autotune(kShape, kUrl).source, ResultSource::imported);
}

TEST(FleetDispatch, AnUnreachableFleetStoreLeavesCallsToTheLocalPath) {
  Fleet fleet;
  fleet.down = true;
  FleetProcess a("node-a", opener(fleet));
  EXPECT_EQ(a.autotune(kShape, kUrl).source, ResultSource::tuned);
  EXPECT_EQ(a.local->entries.size(), 1u);  // nothing local is lost
  fleet.down = false;
  FleetProcess b("node-b", opener(fleet));
  EXPECT_EQ(b.autotune(kShape, kUrl).source, ResultSource::tuned);  // a's was never published
  EXPECT_EQ(fleet.publications, 1);
}

TEST(FleetDispatch, ABadUrlIsTheCallersMistake) {
  FleetProcess a("node-a", [](const std::string& url) {
    return open_redis_store(url, RemoteTimes{});
  });
  EXPECT_THROW(a.autotune(kShape, "redis://no-port"), InvalidArgument);
}

}  // namespace
}  // namespace tilemm::dispatch
