#include "log.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tilemm::detail {
namespace {

LogLevel level_from_environment() {
  const char* value = std::getenv("TILEMM_LOG");
  if (value == nullptr) return LogLevel::warn;
  if (std::strcmp(value, "error") == 0) return LogLevel::error;
  if (std::strcmp(value, "info") == 0) return LogLevel::info;
  if (std::strcmp(value, "debug") == 0) return LogLevel::debug;
  return LogLevel::warn;
}

const char* name(LogLevel level) {
  switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warning";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

// "<milliseconds> ms", with three decimals: the one spelling of a time in log lines.
std::string milliseconds(std::chrono::steady_clock::duration elapsed) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f ms",
                std::chrono::duration<double, std::milli>(elapsed).count());
  return ms;
}

}  // namespace

bool log_enabled(LogLevel level) {
  static const LogLevel threshold = level_from_environment();
  return level <= threshold;
}

std::string took(const std::string& what, std::chrono::steady_clock::duration elapsed) {
  return what + " in " + milliseconds(elapsed);
}

StepTimes::StepTimes() : on_(log_enabled(LogLevel::debug)) {
  if (on_) start_ = last_ = std::chrono::steady_clock::now();
}

void StepTimes::mark(const char* step) {
  if (!on_) return;
  const auto now = std::chrono::steady_clock::now();
  steps_ += (steps_.empty() ? ": " : ", ") + std::string(step) + " " + milliseconds(now - last_);
  last_ = now;
}

void StepTimes::log_total(const std::string& what) const {
  if (!on_) return;
  log(LogLevel::debug, took(what, std::chrono::steady_clock::now() - start_) + steps_);
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  // One fprintf per line so that lines from several threads do not interleave.
  std::fprintf(stderr, "tilemm: %s: %s\n", name(level), message.c_str());
}

}  // namespace tilemm::detail
