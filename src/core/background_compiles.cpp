#include "background_compiles.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "compiled_variants.hpp"
#include "log.hpp"
#include "nvrtc_compiler.hpp"

namespace tilemm::detail {
namespace {

struct Job {
  Variant variant;
  std::string arch;
  std::promise<void> ended;
  std::shared_ptr<std::atomic<bool>> dropped;
};

// Never destroyed: its threads are never joined and may wait on it while the process exits.
struct Pool {
  std::mutex mutex;
  std::condition_variable work;
  std::deque<Job> queue;
  int running = 0;                // jobs taken off the queue and not ended
  std::condition_variable idle;   // the queue is empty and nothing runs
  bool started = false;
};
Pool& pool() {
  static auto* p = new Pool();
  return *p;
}

void run_jobs() {
  Pool& p = pool();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(p.mutex);
      p.work.wait(lock, [&] { return !p.queue.empty(); });
      job = std::move(p.queue.front());
      p.queue.pop_front();
      ++p.running;
    }
    if (!job.dropped->load()) {
      // A failure (or the process exiting) is the requester's to see: its own compile call
      // compiles again and throws. Nothing is logged here, where the process may be exiting.
      try {
        compile_variant_once(job.variant, job.arch);
      } catch (const std::exception&) {
      }
    }
    job.ended.set_value();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (--p.running == 0 && p.queue.empty()) p.idle.notify_all();
  }
}

// At exit, before NVRTC tears itself down: no compilation may run then, and NVRTC registers the
// teardown of state it creates lazily, during any compilation, so no atexit handler of ours can be
// sure to run first. A thread_local object of the main thread is destroyed when exit() starts on
// it (returning from main), before any atexit handler: it is made when the library is loaded, on
// the main thread, since the pool may be started by any thread. The atexit handler, registered
// after NVRTC warmed up, is for exit() called on another thread.
void stop_at_exit() {
  Pool& p = pool();
  bool started = false;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    started = p.started;
  }
  if (started) stop_nvrtc_compilations();
}
struct MainThreadExit {
  ~MainThreadExit() { stop_at_exit(); }
};
void watch_main_thread_exit() {
  if (static_cast<pid_t>(syscall(SYS_gettid)) != getpid()) return;
  static thread_local MainThreadExit watch;
  (void)&watch;  // constructs it on this thread, which registers its destruction
}
const bool main_thread_watched = (watch_main_thread_exit(), true);

void start_pool(const std::string& arch) {
  watch_main_thread_exit();
  // NVRTC registers its first teardown with atexit on its first compilation: warmed up first, that
  // teardown runs after the handler below. A failure here is each compilation's to report.
  try {
    warm_up_nvrtc(arch);
  } catch (const std::exception& e) {
    log(LogLevel::debug, std::string("NVRTC did not warm up: ") + e.what());
  }
  if (std::atexit(stop_at_exit) != 0)
    log(LogLevel::warn, "the background compilations could not register their exit handler: a "
                        "process that exits on a thread other than main while one runs may crash");
  const unsigned hardware = std::max(2u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i + 1 < hardware; ++i) std::thread(run_jobs).detach();
}

}  // namespace

BackgroundCompile compile_in_background(const Variant& v, const std::string& arch) {
  Pool& p = pool();
  Job job{v, arch, {}, std::make_shared<std::atomic<bool>>(false)};
  BackgroundCompile handle{job.ended.get_future().share(), job.dropped};
  bool start = false;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    start = !p.started;
    p.started = true;
    p.queue.push_back(std::move(job));  // taken once the pool's threads exist
  }
  if (start) start_pool(arch);
  p.work.notify_one();
  return handle;
}

void wait_for_background_compiles() {
  Pool& p = pool();
  std::unique_lock<std::mutex> lock(p.mutex);
  p.idle.wait(lock, [&] { return p.queue.empty() && p.running == 0; });
}

BackgroundCompile already_compiled() {
  std::promise<void> ended;
  ended.set_value();
  return {ended.get_future().share(), std::make_shared<std::atomic<bool>>(false)};
}

}  // namespace tilemm::detail
