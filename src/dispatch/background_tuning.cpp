#include "background_tuning.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <utility>
#include <vector>

#include "log.hpp"
#include "nvrtc_compiler.hpp"
#include "quiet_timing.hpp"

namespace tilemm::dispatch {

using detail::log;
using detail::LogLevel;

namespace {

// Every live BackgroundTuning, for the exit handler. Never destroyed: the handler runs during
// exit, after static objects constructed later than its registration are gone.
struct LiveTunings {
  std::mutex mutex;
  std::set<BackgroundTuning*> all;
  std::atomic<bool> any_worker_started{false};  // until then exit has nothing to stop
};
LiveTunings& live_tunings() {
  static auto* live = new LiveTunings();
  return *live;
}

// At exit, before the CUDA runtime and NVRTC tear themselves down: a worker still tuning would
// otherwise call into a library that is gone, or be destroyed while joinable. Where that is
// guaranteed: exit() destroys the exiting thread's thread_local objects before it runs any atexit
// handler, so a thread_local of the main thread (MainThreadExit below) stops the workers first
// when the main thread exits the process, which is what returning from main() does. NVRTC cannot
// be outrun by an atexit handler alone: it registers the teardown of state it creates lazily
// during later compilations too (a compiling thread can then crash at exit inside NVRTC after
// such a teardown ran). The atexit handler stays for exit() called on another thread:
// registered at enqueue and again after each worker warmed NVRTC up, it runs before whatever the
// CUDA runtime and NVRTC registered until then. Running twice does no harm.
void stop_all_at_exit() {
  LiveTunings& live = live_tunings();
  std::lock_guard<std::mutex> lock(live.mutex);
  if (!live.any_worker_started) return;
  // First every worker hears the stop, then compilations in flight end and no new one starts (a
  // tuning compiles its candidates on several threads), then the workers are joined.
  log(LogLevel::debug, "process exit: stopping background tuning");
  for (BackgroundTuning* tuning : live.all) tuning->request_stop();
  detail::stop_nvrtc_compilations();
  log(LogLevel::debug, "process exit: no compilation running; joining the background workers");
  for (BackgroundTuning* tuning : live.all) tuning->stop();
  log(LogLevel::debug, "process exit: background tuning stopped");
}

// Destroyed when the main thread's thread_local objects are: at the start of exit() on it (or at
// pthread_exit() from main(), which stops background tuning early: shapes keep their fallbacks).
struct MainThreadExit {
  ~MainThreadExit() { stop_all_at_exit(); }
};

bool on_main_thread() { return static_cast<pid_t>(syscall(SYS_gettid)) == getpid(); }

void watch_main_thread_exit() {
  if (!on_main_thread()) return;
  static thread_local MainThreadExit watch;
  (void)&watch;  // constructs it on this thread, which registers its destruction
}

// The library's static initialization usually runs on the main thread; enqueue() watches again
// in case it did not (a library loaded by another thread).
const bool main_thread_watched = (watch_main_thread_exit(), true);

void register_exit_handler() {
  if (std::atexit(stop_all_at_exit) != 0)
    log(LogLevel::warn, "background tuning could not register its exit handler: a process that "
                        "exits while a shape is tuning may crash");
}

}  // namespace

BackgroundTuning::BackgroundTuning(Run run, std::string lease_owner,
                                   std::function<void(int ordinal)> enter_device,
                                   std::function<void()> drain_device)
    : run_(std::move(run)),
      lease_owner_(std::move(lease_owner)),
      enter_device_(std::move(enter_device)),
      drain_device_(std::move(drain_device)) {
  LiveTunings& live = live_tunings();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.all.insert(this);
}

BackgroundTuning::~BackgroundTuning() {
  {
    // Waits for an exit handler that is stopping this instance right now.
    LiveTunings& live = live_tunings();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.all.erase(this);
  }
  stop();
}

bool BackgroundTuning::enqueue(BackgroundJob job) {
  // Registered on the first job of the process: the caller has initialized the CUDA runtime by
  // now (the fallback it runs is loaded), so this handler runs before the runtime's teardown.
  watch_main_thread_exit();
  static std::once_flag exit_handler;
  std::call_once(exit_handler, register_exit_handler);
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || !pending_.insert(job.key).second) return false;
  const int ordinal = job.device.ordinal;
  Worker& worker = workers_[ordinal];
  worker.queue.push_back(std::move(job));
  if (!worker.thread.joinable()) {
    live_tunings().any_worker_started = true;  // not under live.mutex: the exit path takes it first
    worker.thread = std::thread([this, ordinal] { work(ordinal); });
  }
  changed_.notify_all();
  return true;
}

void BackgroundTuning::request_stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = true;
  for (auto& [ordinal, worker] : workers_) {
    for (const BackgroundJob& job : worker.queue) pending_.erase(job.key);
    worker.queue.clear();
  }
  changed_.notify_all();
}

void BackgroundTuning::stop() {
  request_stop();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [ordinal, worker] : workers_)
      if (worker.thread.joinable()) threads.push_back(std::move(worker.thread));
  }
  for (std::thread& t : threads) {
    // exit() called on a worker itself (from a progress callback, say) cannot join it.
    if (t.get_id() == std::this_thread::get_id())
      t.detach();
    else
      t.join();
  }
}

void BackgroundTuning::wait_until_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return pending_.empty(); });
}

void BackgroundTuning::work(int ordinal) {
  bool entered = true;
  try {
    if (enter_device_) enter_device_(ordinal);
    // enter_device_ warmed NVRTC up: its teardown is registered now, so this handler runs first.
    static std::once_flag after_warm_up;
    std::call_once(after_warm_up, register_exit_handler);
  } catch (const std::exception& e) {
    log(LogLevel::warn, "background tuning on device " + std::to_string(ordinal) +
                            " is unavailable, its shapes keep their fallbacks: " + e.what());
    entered = false;
  }
  while (true) {
    BackgroundJob job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      Worker& worker = workers_[ordinal];
      changed_.wait(lock, [&] { return stopping_ || !worker.queue.empty(); });
      if (stopping_) return;
      job = std::move(worker.queue.front());
      worker.queue.pop_front();
    }
    if (entered) run_one(job);
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(job.key);
    changed_.notify_all();
  }
}

void BackgroundTuning::run_one(const BackgroundJob& job) {
  const auto stop_requested = [this] { return stopping_.load(); };
  QuietSampler sampler(job.device.ordinal, drain_device_, stop_requested);
  detail::TuneHooks hooks;
  hooks.stop_requested = stop_requested;
  hooks.lease_owner = lease_owner_;
  hooks.sample_gate = [&sampler](const std::function<std::vector<float>()>& take) {
    return sampler(take);
  };
  const std::string shape = describe(job.problem);
  try {
    const AutotuneResult r = run_(job, hooks);
    log(LogLevel::info, "background tuning of " + shape + " done: " + r.winner + " (" +
                            to_string(r.source) + "), later calls run it; " +
                            std::to_string(sampler.discarded()) +
                            " timing samples retaken because a caller's gemm() ran during them");
  } catch (const detail::TuningStopped&) {
    log(LogLevel::info, "background tuning of " + shape + " stopped at exit; nothing stored");
  } catch (const std::exception& e) {
    log(LogLevel::warn, "background tuning of " + shape + " failed, the shape keeps its fallback: " +
                            e.what());
  }
  discarded_samples_ += sampler.discarded();
}

}  // namespace tilemm::dispatch
