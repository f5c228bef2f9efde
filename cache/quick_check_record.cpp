#include "quick_check_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "sqlite_handle.hpp"

namespace tilemm::cache {
namespace {

std::string describe(const struct stat& st) {
  std::ostringstream out;
  out << st.st_dev << ':' << st.st_ino << " size " << st.st_size << " mtime " << st.st_mtim.tv_sec
      << '.' << st.st_mtim.tv_nsec;
  return out.str();
}

}  // namespace

std::string cache_file_state(const std::string& db_path) {
  struct stat db {};
  if (::stat(db_path.c_str(), &db) != 0) return {};
  std::error_code ec;
  const auto main_file = sqlite_main_file(db_path, ec);
  const std::string wal_path = (ec ? db_path : main_file.string()) + "-wal";
  std::string state = "db " + describe(db);
  // An empty -wal is the same database as none: SQLite creates one at a reader's first read and
  // removes it when the last connection closes.
  struct stat wal {};
  if (::stat(wal_path.c_str(), &wal) == 0 && wal.st_size > 0) state += ", wal " + describe(wal);
  return state;
}

std::string quick_check_record_path(const std::string& db_path) { return db_path + ".checked"; }

bool passed_quick_check_in(const std::string& db_path, const std::string& state) {
  if (state.empty()) return false;
  std::ifstream in(quick_check_record_path(db_path));
  std::string recorded;
  return in && std::getline(in, recorded) && recorded == state;
}

void record_quick_check_pass(const std::string& db_path, const std::string& state) noexcept {
  if (state.empty()) return;
  try {
    const std::string record = quick_check_record_path(db_path);
    // Its own name per process and call: two stores opened at once must not write one file.
    static std::atomic<unsigned> calls{0};
    const std::string temporary = record + ".tmp." + std::to_string(::getpid()) + "." +
                                  std::to_string(calls.fetch_add(1));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    const std::string line = state + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    const bool closed = ::close(fd) == 0;
    if (!written || !closed || std::rename(temporary.c_str(), record.c_str()) != 0)
      (void)std::remove(temporary.c_str());
  } catch (...) {  // std::string's allocations: the check runs again next time
  }
}

OwnWrite::OwnWrite(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:") return;
  db_path_ = db_path;
  state_before_ = cache_file_state(db_path);
  from_recorded_state_ = passed_quick_check_in(db_path, state_before_);
}

void OwnWrite::succeeded() noexcept {
  if (!from_recorded_state_) return;
  try {
    const std::string after = cache_file_state(db_path_);
    if (after != state_before_) record_quick_check_pass(db_path_, after);
  } catch (...) {  // std::string's allocations: the next open checks
  }
}

}  // namespace tilemm::cache
