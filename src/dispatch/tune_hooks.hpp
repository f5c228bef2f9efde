// Hooks into one tuning, passed down with it (never installed on a thread): the context's
// (tilemm::TuneHooks, tilemm/context.hpp: how tilemm-tune's worker process reports each candidate
// to its watchdog and skips the candidates that took a previous worker down), plus what a
// background worker adds: how the tuning hears that it must stop, and how samples are taken.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tilemm/context.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {

struct TuneHooks : tilemm::TuneHooks {
  TuneHooks() = default;
  explicit TuneHooks(const tilemm::TuneHooks& context_hooks) : tilemm::TuneHooks(context_hooks) {}

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

}  // namespace tilemm::detail
