// Hooks into tunings run on the calling thread: how tilemm-tune's worker process reports each
// candidate to its watchdog, and how candidates that took a previous worker down are skipped.
#pragma once

#include <functional>
#include <map>
#include <string>

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
};

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
