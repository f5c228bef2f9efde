// Diagnostics to stderr, filtered by TILEMM_LOG=error|warn|info|debug (default warn).
#pragma once

#include <chrono>
#include <string>
#include <type_traits>
#include <utility>

namespace tilemm::detail {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

bool log_enabled(LogLevel level);
// One line: "tilemm: <level>: <message>".
void log(LogLevel level, const std::string& message);

// "<what> in <milliseconds> ms", with three decimals.
std::string took(const std::string& what, std::chrono::steady_clock::duration elapsed);

// Runs `step` and returns what it returns; at debug level it then logs "<what> in <ms> ms".
// `what` is a string, or a function of the step's result that returns one. For the one-time
// costs of a process's first calls (the device query, opening the cache, the preloaded results,
// loading cuBLAS), so that TILEMM_LOG=debug shows where a first call's time went.
template <class What, class Step>
auto timed_step(const What& what, Step&& step) {
  if (!log_enabled(LogLevel::debug)) return std::forward<Step>(step)();
  const auto start = std::chrono::steady_clock::now();
  auto result = std::forward<Step>(step)();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  if constexpr (std::is_invocable_v<const What&, const decltype(result)&>)
    log(LogLevel::debug, took(what(result), elapsed));
  else
    log(LogLevel::debug, took(what, elapsed));
  return result;
}

// The steps of one piece of work and what each took, for a debug line that says where its time
// went ("<what> in <ms> ms: <step> <ms> ms, ..."). Reads no clock unless debug logging is on.
class StepTimes {
 public:
  StepTimes();
  // Ends the step that began at the last mark (or at construction) and names it.
  void mark(const char* step);
  // Logs the line at debug level: the time since construction and each step's.
  void log_total(const std::string& what) const;

 private:
  bool on_;
  std::chrono::steady_clock::time_point start_, last_;
  std::string steps_;
};

}  // namespace tilemm::detail
