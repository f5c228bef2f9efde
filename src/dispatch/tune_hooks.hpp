// Hooks into tunings run on the calling thread: how tilemm-tune's worker process reports each
// candidate to its watchdog, and how candidates that took a previous worker down are skipped.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tilemm/error.hpp"

namespace tilemm::detail {

struct TuneHooks {
  // Variants not to run, with the reason to record (status launch_error).
  std::map<std::string, std::string> skip;
  // Called before a candidate touches the GPU (verification, then timing).
  std::function<void(const std::string& variant)> on_candidate;
  // Called when a candidate's launch or kernel failed, before tuning goes on.
  std::function<void(const std::string& variant, const std::string& reason)> on_launch_failure;
  // Who holds the cache lease while tuning (default "host:pid"). Workers that replace a crashed
  // one take over its lease under the same owner instead of waiting for it to expire.
  std::string lease_owner;
  // Background tuning (background_tuning.hpp). stop_requested is asked before each candidate's
  // CUBIN is fetched, while waiting for another process's lease and just before the result is
  // stored: true stops the tuning with TuningStopped, and nothing of it is stored.
  std::function<bool()> stop_requested;
  // How the bench takes each timing sample (GpuBench::set_sample_gate): the background worker's
  // keeps only samples no caller's gemm() overlapped (quiet_timing.hpp). Empty: as they come.
  std::function<std::vector<float>(const std::function<std::vector<float>()>& take)> sample_gate;
};

// Thrown out of a tuning whose TuneHooks::stop_requested said stop (the process is exiting).
class TuningStopped : public Error {
 public:
  TuningStopped() : Error(ErrorKind::internal, "tilemm: tuning stopped: the process is exiting") {}
};

// Throws TuningStopped when `hooks` has a stop_requested that says stop.
void stop_if_requested(const TuneHooks* hooks);

// The hooks installed on this thread, or nullptr.
const TuneHooks* current_tune_hooks();

// Installs `hooks` for tunings started on this thread while the object lives.
class ScopedTuneHooks {
 public:
  explicit ScopedTuneHooks(const TuneHooks& hooks);
  ~ScopedTuneHooks();
  ScopedTuneHooks(const ScopedTuneHooks&) = delete;
  ScopedTuneHooks& operator=(const ScopedTuneHooks&) = delete;

 private:
  const TuneHooks* previous_;
};

}  // namespace tilemm::detail
