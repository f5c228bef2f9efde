// TILEMM_LOG filters what tilemm writes to stderr: warn by default, nothing below it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "log.hpp"

namespace tilemm::detail {
namespace {

// Runs one message of each level in a child process with TILEMM_LOG set to `setting` (nullptr:
// unset) and returns what the child wrote to stderr.
std::string logged_with(const char* setting) {
  int fds[2];
  if (pipe(fds) != 0) return "<pipe failed>";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    if (setting != nullptr) setenv("TILEMM_LOG", setting, 1); else unsetenv("TILEMM_LOG");
    log(LogLevel::error, "E");
    log(LogLevel::warn, "W");
    log(LogLevel::info, "I");
    log(LogLevel::debug, "D");
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  waitpid(pid, nullptr, 0);
  return text;
}

TEST(Log, LevelsFilterFromErrorToDebug) {
  EXPECT_EQ(logged_with(nullptr), "tilemm: error: E\ntilemm: warning: W\n");
  EXPECT_EQ(logged_with("error"), "tilemm: error: E\n");
  EXPECT_EQ(logged_with("warn"), "tilemm: error: E\ntilemm: warning: W\n");
  EXPECT_EQ(logged_with("info"), "tilemm: error: E\ntilemm: warning: W\ntilemm: info: I\n");
  EXPECT_EQ(logged_with("debug"),
            "tilemm: error: E\ntilemm: warning: W\ntilemm: info: I\ntilemm: debug: D\n");
}

}  // namespace
}  // namespace tilemm::detail
