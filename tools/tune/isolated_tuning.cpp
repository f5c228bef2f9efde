#include "isolated_tuning.hpp"

#include <cuda_runtime_api.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "lease_owner.hpp"
#include "tilemm/autotune.hpp"
#include "tool_conventions.hpp"
#include "tilemm/context.hpp"

extern char** environ;

namespace tilemm::cli {
namespace {

constexpr const char* kRemoteVariable = "TILEMM_REMOTE_CACHE";

// This process's environment with TILEMM_REMOTE_CACHE replaced by `remote` (left out when it is
// empty), for the worker's execve: the parent's own environment is never changed.
std::vector<std::string> worker_environment(const std::string& remote) {
  const std::string prefix = std::string(kRemoteVariable) + "=";
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, prefix.c_str(), prefix.size()) != 0) env.emplace_back(*e);
  if (!remote.empty()) env.push_back(prefix + remote);
  return env;
}

std::vector<char*> pointers_to(const std::vector<std::string>& texts) {
  std::vector<char*> pointers;
  for (const auto& t : texts) pointers.push_back(const_cast<char*>(t.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + strsignal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

// One worker process with its stdout on a pipe.
class Worker {
 public:
  Worker(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    // Built before the fork: the child only calls what is safe between fork and exec.
    std::vector<char*> args = pointers_to(argv);
    std::vector<char*> envp = pointers_to(env);
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid_ == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      execve(args[0], args.data(), envp.data());
      std::fprintf(stderr, "tilemm-tune: cannot start a worker (%s): %s\n", args[0], std::strerror(errno));
      _exit(127);
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  ~Worker() {
    if (fd_ >= 0) close(fd_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // The next line, "" at end of output, or nullopt after `timeout_s` of silence.
  std::optional<std::string> next_line(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (true) {
      const auto nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (eof_) return std::string();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
      if (r <= 0) continue;
      char chunk[4096];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n > 0) buffer_.append(chunk, static_cast<std::size_t>(n));
      else if (n == 0) eof_ = true;
      else if (errno != EINTR) eof_ = true;
    }
  }
  void kill_now() { kill(pid_, SIGKILL); }
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool eof_ = false;
  bool reaped_ = false;
  std::string buffer_;
};

// The budget as the worker's --budget-ms reads it back: exact, not rounded.
std::string budget_text(double ms) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", ms);
  return text;
}

}  // namespace

IsolatedOutcome tune_in_worker(const std::string& self, int device, const Shape& shape,
                               const SearchChoice& search,
                               double watchdog_seconds,
                               const std::function<void(int started)>& on_candidate) {
  IsolatedOutcome outcome;
  const std::string shape_text = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
  // Each failed worker removes one candidate, so this bounds the restarts.
  const std::size_t max_workers = variant_space().size() + 1;
  // One lease owner for all workers of this shape: a replacement takes over a dead worker's lease.
  const std::string lease_owner = cache::process_lease_owner() + ":gpu" + std::to_string(device);
  const std::vector<std::string> env = worker_environment(search.remote_cache);
  for (std::size_t attempt = 0; attempt < max_workers; ++attempt) {
    // The worker tunes into this process's cache: its default context's, named on its command line.
    std::vector<std::string> argv = {self, "--worker", "--device", std::to_string(device), "--shapes", shape_text,
                                     "--lease-owner", lease_owner, "--cache", cache_path()};
    if (search.force) argv.push_back("--force");
    argv.push_back("--budget-ms");
    argv.push_back(budget_text(search.budget_ms));
    argv.push_back("--precision");
    argv.push_back(to_string(search.precision));
    if (!search.vendor) argv.push_back("--no-vendor");
    for (const auto& [variant, reason] : outcome.failed) {
      argv.push_back("--skip");
      argv.push_back(variant + "=" + reason);
    }
    Worker worker(argv, env);
    std::string current;
    int started = 0;
    bool done = false, recorded = false;
    while (true) {
      const auto line = worker.next_line(watchdog_seconds);
      if (!line) {  // silence: the current candidate hangs
        worker.kill_now();
        if (!current.empty()) {
          outcome.failed[current] = "hung: no progress in " + std::to_string(static_cast<int>(watchdog_seconds)) +
                                    " s, worker killed by tilemm-tune's watchdog";
          recorded = true;
        }
        break;
      }
      if (line->empty()) break;  // end of output
      if (line->rfind("candidate ", 0) == 0) {
        current = line->substr(10);
        if (on_candidate) on_candidate(++started);
      } else if (line->rfind("failed ", 0) == 0) {
        const auto space = line->find(' ', 7);
        const std::string variant = line->substr(7, space - 7);
        outcome.failed[variant] = space == std::string::npos ? "launch failed" : line->substr(space + 1);
        recorded = true;
      } else if (*line == "done") {
        done = true;
      }
    }
    const int status = worker.wait();
    if (done && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      outcome.ok = true;
      return outcome;
    }
    if (!recorded) {
      if (current.empty()) {  // died before any candidate: not a faulty kernel, give up
        outcome.error = "the tuning worker for " + shape_text + " failed before running any candidate (" +
                        describe_exit(status) + ")";
        return outcome;
      }
      outcome.failed[current] = "crashed the worker process (" + describe_exit(status) + ")";
    }
  }
  outcome.error = "every tuning worker for " + shape_text + " failed";
  return outcome;
}

int run_worker(int device, const Shape& shape, const SearchChoice& search,
               const std::map<std::string, std::string>& skip, const std::string& lease_owner) {
  if (cudaSetDevice(device) != cudaSuccess) {
    std::fprintf(stderr, "tilemm-tune worker: cannot select CUDA device %d\n", device);
    return 1;
  }
  ContextSettings settings;
  settings.cache_path = cache_path();
  TuneHooks& hooks = settings.hooks;
  hooks.skip = skip;
  hooks.lease_owner = lease_owner;
  hooks.on_candidate = [](const std::string& variant) {
    std::printf("candidate %s\n", variant.c_str());
    std::fflush(stdout);
  };
  hooks.on_launch_failure = [](const std::string& variant, const std::string& reason) {
    std::string one_line = reason;
    for (auto& c : one_line)
      if (c == '\n') c = ' ';
    // The context may be lost: nothing else can run in this process. The parent restarts.
    std::printf("failed %s %s\n", variant.c_str(), one_line.c_str());
    std::fflush(stdout);
    _exit(3);
  };
  try {
    Context context(std::move(settings));
    Options options = search.options();
    context.autotune(shape[0], shape[1], shape[2], options);
  } catch (const std::exception& e) {
    std::fputs(tool::error_line("tilemm-tune worker", e.what()).c_str(), stderr);
    return 1;
  }
  std::printf("done\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace tilemm::cli
