// TILEMM_LOG filters what tilemm writes to stderr: warn by default, nothing below it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "log.hpp"

namespace tilemm::detail {
namespace {

// Runs `body` in a child process with TILEMM_LOG set to `setting` (nullptr: unset) and returns
// what the child wrote to stderr. The child exits 0, or 1 where `body` returns false.
std::string stderr_of(const char* setting, const std::function<bool()>& body) {
  int fds[2];
  if (pipe(fds) != 0) return "<pipe failed>";
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    if (setting != nullptr) setenv("TILEMM_LOG", setting, 1); else unsetenv("TILEMM_LOG");
    _exit(body() ? 0 : 1);
  }
  close(fds[1]);
  std::string text;
  char buffer[256];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) text += "<the child's body failed>";
  return text;
}

// One message of each level, logged with TILEMM_LOG set to `setting`.
std::string logged_with(const char* setting) {
  return stderr_of(setting, [] {
    log(LogLevel::error, "E");
    log(LogLevel::warn, "W");
    log(LogLevel::info, "I");
    log(LogLevel::debug, "D");
    return true;
  });
}

// A step of at least 3 ms that returns 7.
int slow_seven() {
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  return 7;
}

// The milliseconds in the capture groups of `line`, which `body`'s whole stderr at TILEMM_LOG=debug
// must match; none where it does not. At info level `body` must write nothing.
std::vector<double> debug_milliseconds(const std::function<bool()>& body, const std::string& line) {
  EXPECT_EQ(stderr_of("info", body), "");
  const std::string debug = stderr_of("debug", body);
  std::smatch m;
  if (!std::regex_match(debug, m, std::regex(line))) {
    ADD_FAILURE() << "not one debug line of the expected form:\n" << debug;
    return {};
  }
  std::vector<double> ms;
  for (std::size_t i = 1; i < m.size(); ++i) ms.push_back(std::stod(m[i]));
  return ms;
}

TEST(Log, LevelsFilterFromErrorToDebug) {
  EXPECT_EQ(logged_with(nullptr), "tilemm: error: E\ntilemm: warning: W\n");
  EXPECT_EQ(logged_with("error"), "tilemm: error: E\n");
  EXPECT_EQ(logged_with("warn"), "tilemm: error: E\ntilemm: warning: W\n");
  EXPECT_EQ(logged_with("info"), "tilemm: error: E\ntilemm: warning: W\ntilemm: info: I\n");
  EXPECT_EQ(logged_with("debug"),
            "tilemm: error: E\ntilemm: warning: W\ntilemm: info: I\ntilemm: debug: D\n");
}

TEST(Log, ATimedStepSaysHowLongItTookAtDebugLevelOnly) {
  const auto both_steps = [] {
    const int named = timed_step("the step", slow_seven);
    const auto says_what_it_got = [](int got) { return "got " + std::to_string(got); };
    const int described = timed_step(says_what_it_got, slow_seven);
    return named == 7 && described == 7;
  };
  const auto ms =
      debug_milliseconds(both_steps, R"(tilemm: debug: the step in ([0-9]+\.[0-9]{3}) ms\n)"
                                     R"(tilemm: debug: got 7 in ([0-9]+\.[0-9]{3}) ms\n)");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_GE(ms[0], 3.0);
  EXPECT_GE(ms[1], 3.0);
  EXPECT_EQ(stderr_of(nullptr, both_steps), "");
}

TEST(Log, StepTimesNameEachStepAndTheTotalAtDebugLevelOnly) {
  const auto two_steps = [] {
    StepTimes steps;
    slow_seven();
    steps.mark("first");
    steps.mark("second");  // nothing between the marks
    slow_seven();
    steps.log_total("the work");  // the time after the last mark counts in the total only
    return true;
  };
  const auto ms =
      debug_milliseconds(two_steps, R"(tilemm: debug: the work in ([0-9]+\.[0-9]{3}) ms: )"
                                    R"(first ([0-9]+\.[0-9]{3}) ms, )"
                                    R"(second ([0-9]+\.[0-9]{3}) ms\n)");
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_GE(ms[0], 6.0);
  EXPECT_GE(ms[1], 3.0);
  EXPECT_LT(ms[2], 3.0);
}

}  // namespace
}  // namespace tilemm::detail
