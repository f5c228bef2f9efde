// TunePolicy::background in the dispatcher, on the CPU: the first call runs the fallback at once,
// a shape is tuned once in the background and later calls get its winner; a waiting or failing
// tuning never holds a caller, and stopping never hangs or stores a half tuning.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "dispatcher_rig.hpp"

namespace tilemm::dispatch {
namespace {

using namespace rig;  // NOLINT(google-build-using-namespace): the fakes every test here uses

// A door the fake tuner waits at, opened by the test; `reached` says a tuning is waiting there.
class Door {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  // Called by the tuning: waits until the door opens or `stop` says stop (checked every ms),
  // for at most 20 s, so that a broken stop fails the test instead of hanging it.
  void wait(const std::function<bool()>& stop = {}) {
    std::unique_lock<std::mutex> lock(mutex_);
    reached_ = true;
    changed_.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!open_ && !(stop && stop()) && std::chrono::steady_clock::now() < deadline)
      changed_.wait_for(lock, std::chrono::milliseconds(1));
  }
  void wait_until_reached() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return reached_; });
  }
  bool reached_within(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [this] { return reached_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  bool reached_ = false;
};

// Another connection to the rig's store, as the background worker gets one: every call reaches
// the same fake data, and a write first waits at `door`. The test keeps its own thread off the
// data while the worker is past the door.
class ConnectionWithSlowWrites : public ResultStore {
 public:
  ConnectionWithSlowWrites(const ConnectionWithSlowWrites&) = delete;
  ConnectionWithSlowWrites& operator=(const ConnectionWithSlowWrites&) = delete;
  ConnectionWithSlowWrites(FakeStore& data, Door& door) : data_(data), door_(door) {}
  std::optional<StoredEntry> find(const std::string& device_key, const Problem& p,
                                  const std::string& problem_class, cache::CandidateSet set,
                                  bool with_candidates) override {
    return data_.find(device_key, p, problem_class, set, with_candidates);
  }
  std::vector<StoredEntry> list(const std::string& device_key, bool with_candidates) override {
    return data_.list(device_key, with_candidates);
  }
  void put_all(const std::vector<StoredEntry>& entries) override {
    door_.wait();
    data_.put_all(entries);
  }
  bool loads_stored_code() override { return data_.loads_stored_code(); }
  std::optional<std::vector<char>> find_cubin(const std::string& arch, int nvrtc_version,
                                              const std::string& template_hash,
                                              const std::string& variant) override {
    return data_.find_cubin(arch, nvrtc_version, template_hash, variant);
  }
  bool has_cubin(const std::string& arch, int nvrtc_version, const std::string& template_hash,
                 const std::string& variant) override {
    return data_.has_cubin(arch, nvrtc_version, template_hash, variant);
  }
  void put_cubin(const detail::CompiledVariant& compiled, const std::string& arch,
                 int nvrtc_version) override {
    data_.put_cubin(compiled, arch, nvrtc_version);
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    ++lease_calls;
    return data_.try_acquire_lease(key, owner, ttl);
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    data_.release_lease(key, owner);
  }

  int lease_calls = 0;  // takes and renewals through this connection

 private:
  FakeStore& data_;
  Door& door_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Background, TheFirstCallRunsTheFallbackAtOnceAndLaterCallsTheWinnerOnceStored) {
  Rig rig;
  rig.tuner->winners[512] = "tiled_t32_p1";
  Door door;
  rig.tuner->during = [&](const TuneRequest&) { door.wait(); };
  const Decision first = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(first.fallback);
  EXPECT_TRUE(first.queued);
  EXPECT_EQ(kernel_of(first), variant_name(default_variant()));  // nothing tuned near it
  door.wait_until_reached();  // the worker is tuning the shape, and the caller goes on
  const Decision during_tuning = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(during_tuning.fallback);
  EXPECT_EQ(kernel_of(during_tuning), variant_name(default_variant()));
  door.open();
  rig.dispatcher->wait_for_background_tunings();
  const Decision tuned = rig.gemm(kShape, TunePolicy::background);
  EXPECT_FALSE(tuned.fallback);
  EXPECT_EQ(kernel_of(tuned), "tiled_t32_p1");
  ASSERT_NE(rig.store->at(kShape), nullptr);
  EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t32_p1");
  EXPECT_EQ(rig.tuner->tuned, std::vector<std::int64_t>{512});
  // Under its own name, so that a tune_on_miss caller of this process waits for its result.
  EXPECT_EQ(rig.store->lease_log,
            (std::vector<std::string>{"take host:1 background", "release host:1 background"}));
}

// autotune() under background answers at once too (the fallback, queued), and neither it nor
// gemm() queues a shape that is queued or being tuned.
TEST(Background, AShapeQueuedOrBeingTunedIsTunedOnceAndAutotuneDoesNotWaitForIt) {
  Rig rig;
  Door door;
  rig.tuner->during = [&](const TuneRequest&) { door.wait(); };
  const Problem other = Problem::dense(256, 512, 512, 4);
  rig.gemm(kShape, TunePolicy::background);
  door.wait_until_reached();
  rig.gemm(other, TunePolicy::background);  // queued behind kShape: one worker per device
  for (int i = 0; i < 3; ++i) {
    const AutotuneResult r = rig.autotune(kShape, TunePolicy::background);
    EXPECT_EQ(r.source, ResultSource::fallback);
    EXPECT_EQ(rig.autotune(other, TunePolicy::background).source, ResultSource::fallback);
    rig.gemm(kShape, TunePolicy::background);
    rig.gemm(other, TunePolicy::background);
  }
  door.open();
  rig.dispatcher->wait_for_background_tunings();
  EXPECT_EQ(rig.tuner->tuned, (std::vector<std::int64_t>{512, 256}));
  EXPECT_EQ(rig.autotune(other, TunePolicy::background).source, ResultSource::cache);
  EXPECT_FALSE(rig.gemm(other, TunePolicy::background).fallback);
}

// Another process holds the shape's lease: the worker waits for its result (and tunes nothing)
// while the callers keep running the fallback.
TEST(Background, TheWorkerWaitsForAnotherProcessesLeaseWithoutHoldingTheCallers) {
  Rig rig({}, LeaseTimes{300.0, 600.0, std::chrono::milliseconds(1)});
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  rig.store->leases[key] = {"host:2", 300.0};
  Door other_process_done;
  rig.store->other_process = [&](FakeStore& s) {
    other_process_done.wait();  // the worker is blocked here, in the lease loop, until ...
    s.add(stored(kShape, "tiled_t32_p0"));
    s.leases.erase(key);
  };
  rig.gemm(kShape, TunePolicy::background);
  other_process_done.wait_until_reached();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(rig.gemm(kShape, TunePolicy::background).fallback);
  EXPECT_LT(seconds_since(start), 1.0);  // no caller waited for the lease
  other_process_done.open();  // ... the other process stores its result and releases the lease
  rig.dispatcher->wait_for_background_tunings();
  EXPECT_EQ(kernel_of(rig.gemm(kShape, TunePolicy::background)), "tiled_t32_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
}

TEST(Background, ATuningThatThrowsLeavesTheFallbackInPlaceAndSaysSo) {
  Rig rig;
  rig.tuner->during = [](const TuneRequest&) {
    throw Error(ErrorKind::internal, "tilemm: tuning found no correct candidate");
  };
  ::testing::internal::CaptureStderr();
  rig.gemm(kShape, TunePolicy::background);
  rig.dispatcher->wait_for_background_tunings();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("background tuning of 512x512x512 (a4-dense) failed"), std::string::npos)
      << said;
  const Decision after = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(after.fallback);
  EXPECT_EQ(kernel_of(after), variant_name(default_variant()));
  EXPECT_EQ(rig.store->puts, 0);
  EXPECT_TRUE(rig.store->leases.empty());
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);  // background calls do not queue it again ...
  rig.tuner->during = nullptr;
  EXPECT_FALSE(rig.gemm(kShape, TunePolicy::tune_on_miss).fallback);  // ... a tuning call tunes
  EXPECT_EQ(rig.tuner->tuned.size(), 2u);
}

// The dispatcher goes away (at exit, the process's stops the same way) while a tuning runs:
// the tuning hears it, nothing of it is stored, its lease is released, and nothing hangs.
TEST(Background, StoppingMidTuningStoresNothingReleasesTheLeaseAndDoesNotHang) {
  Rig rig;
  Door never_opened;
  bool heard_stop = false;
  rig.tuner->during = [&](const TuneRequest& request) {
    const auto* hooks = request.hooks;
    ASSERT_NE(hooks, nullptr);
    never_opened.wait([&] { return heard_stop = hooks->stop_requested(); });
  };
  int puts = -1;
  std::vector<std::string> lease_log;
  std::size_t leases_held = 99;
  rig.store->before_destruction = [&](const FakeStore& s) {
    puts = s.puts;
    lease_log = s.lease_log;
    leases_held = s.leases.size();
  };
  rig.gemm(kShape, TunePolicy::background);
  never_opened.wait_until_reached();
  const auto start = std::chrono::steady_clock::now();
  rig.dispatcher.reset();
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_TRUE(heard_stop);
  EXPECT_EQ(puts, 0);
  EXPECT_EQ(leases_held, 0u);
  EXPECT_EQ(lease_log,
            (std::vector<std::string>{"take host:1 background", "release host:1 background"}));
}

// Stopping also ends a wait for another process's lease, which may last max_wait_seconds.
TEST(Background, StoppingEndsAWaitForAnotherProcessesLease) {
  // A wait bounded at 30 s: a stop that is not heard fails the test below instead of hanging it.
  Rig rig({}, LeaseTimes{300.0, 30.0, std::chrono::milliseconds(1)});
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  rig.store->leases[key] = {"host:2", 300.0};  // held, never released
  Door waiting;
  rig.store->other_process = [&](FakeStore&) { waiting.open(); };
  rig.gemm(kShape, TunePolicy::background);
  waiting.wait();  // the worker found the lease held at least once
  const auto start = std::chrono::steady_clock::now();
  rig.dispatcher.reset();
  EXPECT_LT(seconds_since(start), 5.0);
}

// The worker writes through a connection of its own: while it holds that one's lock (storing a
// tuning of hundreds of candidates), a caller's new shape still reads the cache and gets its
// fallback at once.
TEST(Background, ACallerDoesNotWaitWhileTheWorkerWritesToTheCache) {
  Rig rig;
  rig.tuner->winners[512] = "tiled_t32_p1";
  rig.store->add(stored(Problem::dense(256, 256, 256, 4), "tiled_t16_p0"));
  Door door;
  rig.store->another = [&] { return std::make_unique<ConnectionWithSlowWrites>(*rig.store, door); };
  rig.gemm(kShape, TunePolicy::background);
  // The worker is storing kShape's result, through its own connection.
  ASSERT_TRUE(door.reached_within(std::chrono::seconds(20)))
      << "the worker wrote through the callers' connection";
  const auto start = std::chrono::steady_clock::now();
  const Problem near_the_cached_one = Problem::dense(250, 260, 256, 4);
  const Decision d = rig.gemm(near_the_cached_one, TunePolicy::background);
  EXPECT_LT(seconds_since(start), 1.0);  // not the door's 20 s
  EXPECT_TRUE(d.fallback);
  EXPECT_EQ(kernel_of(d), "tiled_t16_p0");  // the nearest cached shape's winner: the cache was read
  door.open();
  rig.dispatcher->wait_for_background_tunings();
  ASSERT_NE(rig.store->at(kShape), nullptr);
  EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t32_p1");
  EXPECT_EQ(kernel_of(rig.gemm(kShape, TunePolicy::background)), "tiled_t32_p1");
  EXPECT_NE(rig.store->at(near_the_cached_one), nullptr);  // tuned in turn, and stored
}

// The worker's lease is renewed, while it tunes, through the worker's connection too: a renewal
// on the callers' connection could wait behind the worker's own write (SQLite's file lock), with
// the callers' lock held.
TEST(Background, TheWorkersLeaseIsRenewedThroughItsOwnConnection) {
  Rig rig({}, LeaseTimes{0.03, 600.0, std::chrono::milliseconds(1)});  // renewed every 10 ms
  Door door;
  door.open();  // writes pass at once
  ConnectionWithSlowWrites* worker = nullptr;
  rig.store->another = [&] {
    auto made = std::make_unique<ConnectionWithSlowWrites>(*rig.store, door);
    worker = made.get();
    return made;
  };
  rig.tuner->during = [](const TuneRequest&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  rig.gemm(kShape, TunePolicy::background);
  rig.dispatcher->wait_for_background_tunings();
  ASSERT_NE(worker, nullptr);
  std::size_t takes = 0;
  for (const std::string& line : rig.store->lease_log) takes += line.rfind("take ", 0) == 0;
  EXPECT_GE(worker->lease_calls, 3);  // the take and at least two renewals
  EXPECT_EQ(static_cast<std::size_t>(worker->lease_calls), takes);  // none on the callers' one
}

}  // namespace
}  // namespace tilemm::dispatch
