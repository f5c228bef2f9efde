#include "store_open.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "utc_time.hpp"

namespace tilemm::cache {
namespace {

// An exclusive flock on "<path>.lock" for the lifetime of the object.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_;
};

OpenedStore in_memory(const std::string& why) {
  return {std::make_unique<TuningStore>(":memory:"), false,
          why + "; tuning results are kept in memory for this process only"};
}

}  // namespace

OpenedStore open_store(const std::string& path) {
  namespace fs = std::filesystem;
  try {
    const auto parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent);
  } catch (const std::exception& e) {
    return in_memory("cannot create the folder of the cache '" + path + "' (" + e.what() + ")");
  }
  try {
    return {std::make_unique<TuningStore>(path), true, ""};
  } catch (const CacheCorrupt& first) {
    FileLock lock(path + ".lock");
    if (!lock.held()) return in_memory(std::string(first.what()) + ", and it cannot be locked to move it aside");
    try {
      // Another process may have replaced it while we waited for the lock.
      return {std::make_unique<TuningStore>(path), true, ""};
    } catch (const CacheCorrupt&) {
    } catch (const std::exception& e) {
      return in_memory(std::string("cannot use the cache '") + path + "' (" + e.what() + ")");
    }
    const std::string aside = path + ".corrupt-" + detail::utc_now_text("%Y%m%dT%H%M%SZ");
    std::error_code ec;
    fs::rename(path, aside, ec);
    if (ec) return in_memory(std::string(first.what()) + "; moving it aside failed: " + ec.message());
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(path + suffix, ec);  // belonged to the damaged file
    try {
      return {std::make_unique<TuningStore>(path), true,
              "the cache '" + path + "' was damaged (" + first.what() + "); moved it to '" + aside +
                  "' and started a fresh one"};
    } catch (const std::exception& e) {
      return in_memory(std::string("cannot create a fresh cache at '") + path + "' (" + e.what() + ")");
    }
  } catch (const std::exception& e) {
    return in_memory(std::string("cannot use the cache '") + path + "' (" + e.what() + ")");
  }
}

}  // namespace tilemm::cache
