// Runs a shell command, as an operator would run a tool, and keeps its exit code and stdout
// (append " 2>&1" to the command to keep stderr too).
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace tilemm::testing {

struct ProgramOutput {
  int code;  // the exit status; -1 when it did not exit normally or could not start
  std::string text;
};

inline ProgramOutput run_command(const std::string& command) {
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string text;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace tilemm::testing
