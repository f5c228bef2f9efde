// Compilations that run on a process-wide pool of threads, off the tuning that asked for them. A
// budgeted tuning hands its candidates to the pool ahead of its screening and waits for each only
// until its deadline: one still compiling then is not waited for. It finishes on the pool and
// is kept by compile_variant_once, so the next tuning that wants the variant has it at once.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include "tilemm/variant.hpp"

namespace tilemm::detail {

struct BackgroundCompile {
  // Ready once the compilation has ended, whether it succeeded or failed; compile_variant_once
  // then returns its CUBIN without compiling (a failure is not kept: it compiles again and
  // throws).
  std::shared_future<void> ended;
  // Set by the tuning that no longer needs it: a compilation not started yet never starts.
  std::shared_ptr<std::atomic<bool>> dropped;
};

// Queues compile_variant_once(v, arch) on the pool (first in, first out). The pool has one thread
// per hardware thread but one, started with the first request. Before the process exits, the
// compilations running are waited for and no new one starts (stop_nvrtc_compilations), so NVRTC
// is never torn down under one.
BackgroundCompile compile_in_background(const Variant& v, const std::string& arch);

// Returns once nothing is queued or compiling on the pool: for a caller that counts compilations
// (nvrtc_compile_count) and must not count those a tuning left behind.
void wait_for_background_compiles();

// A BackgroundCompile that has already ended: for a variant whose CUBIN is at hand elsewhere.
BackgroundCompile already_compiled();

}  // namespace tilemm::detail
