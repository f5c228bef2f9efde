// Background tuning's parts on the CPU: the callers' launch counters (src/core/device_activity.hpp),
// the quiet samples (src/dispatch/quiet_timing.hpp) and the workers' queue
// (src/dispatch/background_tuning.hpp). The dispatcher's use of them:
// test_dispatcher_background.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "background_tuning.hpp"
#include "device_activity.hpp"
#include "quiet_timing.hpp"
#include "tune_hooks.hpp"

namespace tilemm::dispatch {
namespace {

// Each test its own ordinal: the counters are the process's.
QuietRetry fast_retry() {
  QuietRetry r;
  r.immediate = 2;
  r.first_wait = std::chrono::microseconds(50);
  r.longest_wait = std::chrono::microseconds(400);
  return r;
}

TEST(DeviceActivity, AMarkExistsOnlyWhenNoLaunchIsInProgressAndALaterLaunchIsSeen) {
  constexpr int kOrdinal = 11;
  const auto quiet = detail::quiet_launch_mark(kOrdinal);
  ASSERT_TRUE(quiet.has_value());
  EXPECT_FALSE(detail::launched_since(kOrdinal, *quiet));
  {
    const detail::CallerLaunch launching(kOrdinal);
    EXPECT_FALSE(detail::quiet_launch_mark(kOrdinal).has_value());
    EXPECT_TRUE(detail::launched_since(kOrdinal, *quiet));
  }
  const auto after = detail::quiet_launch_mark(kOrdinal);
  ASSERT_TRUE(after.has_value());
  EXPECT_NE(*after, *quiet);
  { const detail::CallerLaunch other_device(kOrdinal + 1); }
  EXPECT_FALSE(detail::launched_since(kOrdinal, *after));
  EXPECT_FALSE(detail::quiet_launch_mark(detail::kMaxActivityOrdinals).has_value());
}

TEST(QuietSampler, KeepsASampleNoCallerLaunchedDuringAfterDrainingTheDevice) {
  constexpr int kOrdinal = 12;
  int drains = 0, takes = 0;
  QuietSampler sampler(kOrdinal, [&] { ++drains; }, [] { return false; }, fast_retry());
  const auto sample = sampler([&] {
    EXPECT_EQ(drains, takes + 1);  // drained before each sample
    ++takes;
    return std::vector<float>{1.5f};
  });
  EXPECT_EQ(sample, std::vector<float>{1.5f});
  EXPECT_EQ(takes, 1);
  EXPECT_EQ(sampler.discarded(), 0);
}

TEST(QuietSampler, DiscardsAndRetakesASampleACallerLaunchedDuring) {
  constexpr int kOrdinal = 13;
  int takes = 0;
  QuietSampler sampler(kOrdinal, {}, [] { return false; }, fast_retry());
  const auto sample = sampler([&] {
    // A caller's gemm() during the first three samples, and during none after.
    if (takes++ < 3) const detail::CallerLaunch caller(kOrdinal);
    return std::vector<float>{static_cast<float>(takes)};
  });
  EXPECT_EQ(sample, std::vector<float>{4.0f});
  EXPECT_EQ(sampler.discarded(), 3);
}

TEST(QuietSampler, TakesNothingWhileACallerIsLaunching) {
  constexpr int kOrdinal = 14;
  std::atomic<bool> launch_done{false};
  std::optional<detail::CallerLaunch> caller;
  caller.emplace(kOrdinal);
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    launch_done = true;
    caller.reset();
  });
  QuietSampler sampler(kOrdinal, {}, [] { return false; }, fast_retry());
  bool took_during_launch = false;
  sampler([&] {
    took_during_launch = !launch_done;
    return std::vector<float>{1.0f};
  });
  finisher.join();
  EXPECT_FALSE(took_during_launch);
}

TEST(QuietSampler, AStopEndsARetakeLoopWithTuningStopped) {
  constexpr int kOrdinal = 15;
  int takes = 0;
  QuietSampler sampler(kOrdinal, {}, [&] { return takes >= 5; }, fast_retry());
  EXPECT_THROW(sampler([&] {
                 ++takes;
                 const detail::CallerLaunch always_disturbed(kOrdinal);
                 return std::vector<float>{1.0f};
               }),
               detail::TuningStopped);
  EXPECT_EQ(takes, 5);
}

BackgroundJob job_for(int ordinal, std::int64_t m) {
  BackgroundJob job;
  job.device.ordinal = ordinal;
  job.problem = Problem::dense(m, 64, 64, 4);
  job.key = key_of(ordinal, job.problem);
  return job;
}

// Jobs run in order on one thread per device, bound to its device first, under hooks that name
// the worker's lease owner; a job queued or running is refused.
TEST(BackgroundTuning, OneWorkerPerDeviceRunsEachShapeOnceInOrder) {
  std::mutex mutex;
  std::vector<std::int64_t> ran;
  std::vector<int> entered;
  std::vector<std::string> owners;
  BackgroundTuning tuning(
      [&](const BackgroundJob& job, const detail::TuneHooks& hooks) {
        std::lock_guard<std::mutex> lock(mutex);
        ran.push_back(job.problem.M);
        owners.push_back(hooks.lease_owner);
        return AutotuneResult{};
      },
      "host:1 background",
      [&](int ordinal) {
        std::lock_guard<std::mutex> lock(mutex);
        entered.push_back(ordinal);
      },
      {});
  EXPECT_TRUE(tuning.enqueue(job_for(0, 100)));
  tuning.wait_until_idle();
  EXPECT_TRUE(tuning.enqueue(job_for(0, 200)));
  EXPECT_TRUE(tuning.enqueue(job_for(0, 300)));
  tuning.wait_until_idle();
  EXPECT_EQ(ran, (std::vector<std::int64_t>{100, 200, 300}));
  EXPECT_EQ(entered, std::vector<int>{0});  // one thread for device 0
  EXPECT_EQ(owners, std::vector<std::string>(3, "host:1 background"));
  EXPECT_TRUE(tuning.enqueue(job_for(0, 100)));  // done, so it may be queued again
  tuning.wait_until_idle();
}

TEST(BackgroundTuning, ADuplicateIsRefusedAndAStopReachesTheRunningJobAndEndsTheQueue) {
  std::atomic<bool> running{false}, heard_stop{false};
  std::atomic<int> runs{0};
  BackgroundTuning tuning(
      [&](const BackgroundJob&, const detail::TuneHooks& given) {
        ++runs;
        running = true;
        const auto* hooks = &given;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (!hooks->stop_requested() && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        heard_stop = hooks->stop_requested();
        detail::stop_if_requested(hooks);
        return AutotuneResult{};
      },
      "owner", {}, {});
  EXPECT_TRUE(tuning.enqueue(job_for(0, 100)));
  EXPECT_TRUE(tuning.enqueue(job_for(0, 200)));
  EXPECT_FALSE(tuning.enqueue(job_for(0, 100)));  // running
  EXPECT_FALSE(tuning.enqueue(job_for(0, 200)));  // queued
  while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = std::chrono::steady_clock::now();
  tuning.stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  EXPECT_TRUE(heard_stop);
  EXPECT_EQ(runs, 1);  // the queued job never started
  EXPECT_FALSE(tuning.enqueue(job_for(0, 300)));  // stopped for good
  tuning.wait_until_idle();                       // nothing left pending
}

}  // namespace
}  // namespace tilemm::dispatch
