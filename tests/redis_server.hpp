// A private redis-server for a test: a free loopback port (never the default 6379), no
// persistence (--save '' --appendonly no), a temporary folder, stopped with the test. Tests skip
// where there is no redis-server (why_no_redis_server() says why). TILEMM_TEST_REDIS_SERVER
// names another binary (a carried one on a machine without the package).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace tilemm::testing {

inline std::string redis_server_path() {
  if (const char* given = std::getenv("TILEMM_TEST_REDIS_SERVER"); given && *given) return given;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/usr/local/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/redis-server").c_str(), X_OK) == 0) return dir + "/redis-server";
  return "";
}

inline std::string why_no_redis_server() {
  return redis_server_path().empty()
             ? "no redis-server on PATH (scripts/install-deps.sh installs it; "
               "TILEMM_TEST_REDIS_SERVER may name one)"
             : "";
}

// A port nothing listens on now: the kernel's pick for a socket bound to port 0.
inline int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t size = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) != 0)
    throw std::runtime_error("cannot find a free loopback port");
  close(fd);
  return ntohs(addr.sin_port);
}

inline bool accepts_connections(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

class RedisServer {
 public:
  // `extra`: more arguments, e.g. {"--requirepass", "secret"}.
  explicit RedisServer(std::vector<std::string> extra = {}) : extra_(std::move(extra)) {
    for (int attempt = 0;; ++attempt) {
      port_ = free_loopback_port();
      try {
        start();
        return;
      } catch (const std::runtime_error&) {
        if (attempt == 4) throw;
      }
    }
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& auth = "") const {
    return "redis://" + auth + "127.0.0.1:" + std::to_string(port_);
  }

  // On the same port, empty (no persistence): a restart also flushes.
  void start() {
    std::vector<std::string> args = {redis_server_path(), "--port", std::to_string(port_),
                                     "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                     "--dir", dir_.file(""), "--daemonize", "no",
                                     "--loglevel", "warning"};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = fork();
    if (pid_ == 0) {
      // Its start-up banner and warnings would bury the test's own output.
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    for (int i = 0; i < 500 && !accepts_connections(port_) && alive(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Another test may have taken the port between the pick and the bind: then this server exits
    // (and the port answers for the other one).
    if (!alive() || !accepts_connections(port_))
      throw std::runtime_error("redis-server did not start on port " + std::to_string(port_));
  }

  bool alive() {
    if (pid_ <= 0) return false;
    if (waitpid(pid_, nullptr, WNOHANG) == 0) return true;
    pid_ = -1;
    return false;
  }

  // SIGKILL: what a crashed or unplugged server looks like to its clients.
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  int port_ = 0;
  std::vector<std::string> extra_;
  TempDir dir_;
  pid_t pid_ = -1;
};

}  // namespace tilemm::testing
