// TunePolicy::background's workers: one thread per device tunes the shapes that gemm() served
// with a fallback, one at a time, in the order they were first called, while the callers go on
// (docs/tuning.md, background tuning). A shape queued or running is not queued again. The
// tuning itself is the caller's (`run`, the dispatcher's tune_on_miss path); this file owns the
// queue, the threads, how a tuning hears that it must stop, and the stop at process exit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "shape_key.hpp"
#include "tilemm/autotune.hpp"
#include "tune_hooks.hpp"

namespace tilemm::dispatch {

struct BackgroundJob {
  ShapeKey key;
  DeviceInfo device;
  Problem problem;
  Options options;  // the first caller's, with policy tune_on_miss
};

class BackgroundTuning {
 public:
  // Tunes `job` under `hooks` (the worker's: its lease owner, its stop, its sample gate) and
  // makes its winner what later calls run; may throw (the worker logs it).
  using Run = std::function<AutotuneResult(const BackgroundJob& job, const detail::TuneHooks& hooks)>;

  // Tunings hold the cache lease as `lease_owner`, which must differ from the process's own, so
  // that a caller of the process tuning the same shape waits for the worker's result.
  // `enter_device` binds a new worker thread to its device (cudaSetDevice) and loads what the
  // tuning will use lazily (NVRTC: detail::warm_up_nvrtc), so that the exit handler registered
  // after it runs before that library's teardown; `drain_device` waits
  // for the worker's device to finish all work queued on it (cudaDeviceSynchronize). Either may
  // be empty (fakes): nothing to bind, nothing to wait for. Starts no thread.
  BackgroundTuning(Run run, std::string lease_owner, std::function<void(int ordinal)> enter_device,
                   std::function<void()> drain_device);
  // stop().
  ~BackgroundTuning();
  BackgroundTuning(const BackgroundTuning&) = delete;
  BackgroundTuning& operator=(const BackgroundTuning&) = delete;

  // Queues `job` for its device's worker, started on the first job of the device. Returns false
  // when the shape is queued or running already, or after stop(). Cost: a mutex; the first job
  // of a device starts a thread. Never waits for a tuning.
  bool enqueue(BackgroundJob job);

  // The first half of stop(), which does not wait: no queued job starts and the running tuning
  // is told to stop.
  void request_stop();

  // Stops the workers: no queued job starts, the running tuning is told to stop (it stores
  // nothing and releases its lease), and the threads are joined, which waits for what the
  // tuning was doing when told: a candidate's compilation or one timing sample. Idempotent; also
  // run for every live instance when the process exits (std::atexit, registered when the first
  // worker starts, after the CUDA runtime is initialized: it runs before the runtime's teardown).
  void stop();

  // Blocks until no job is queued or running (tests, benchmarks).
  void wait_until_idle();

  // Timing samples the workers discarded because a caller launched during them.
  int discarded_samples() const { return discarded_samples_.load(); }

 private:
  struct Worker {
    std::thread thread;
    std::deque<BackgroundJob> queue;
  };
  void work(int ordinal);
  void run_one(const BackgroundJob& job);

  Run run_;
  std::string lease_owner_;
  std::function<void(int ordinal)> enter_device_;
  std::function<void()> drain_device_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, Worker> workers_;  // by device ordinal
  std::set<ShapeKey> pending_;     // queued or running
  std::atomic<bool> stopping_{false};
  std::atomic<int> discarded_samples_{0};
  bool registered_for_exit_ = false;
};

}  // namespace tilemm::dispatch
