#include "store_open.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "private_paths.hpp"
#include "utc_time.hpp"

namespace tilemm::cache {
namespace {

// An exclusive flock on "<path>.lock" for the lifetime of the object.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
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
  OpenedStore opened;
  opened.store = std::make_unique<TuningStore>(":memory:");
  opened.warning = why + "; tuning results are kept in memory for this process only";
  return opened;
}

// Opens the file at `path`; throws like TuningStore's constructor.
OpenedStore on_disk(const std::string& path, const std::string& warning = "") {
  OpenedStore opened;
  opened.store = std::make_unique<TuningStore>(path);
  opened.persistent = true;
  opened.warning = warning;
  opened.code_trust = cache_trust(path);  // after opening: the -wal and -shm files exist now
  return opened;
}

}  // namespace

OpenedStore open_store(const std::string& path) {
  namespace fs = std::filesystem;
  try {
    const auto parent = fs::path(path).parent_path();
    if (!parent.empty()) create_private_folders(parent.string());
  } catch (const std::exception& e) {
    return in_memory("cannot create the folder of the cache '" + path + "' (" + e.what() + ")");
  }
  try {
    return on_disk(path);
  } catch (const CacheCorrupt& first) {
    FileLock lock(path + ".lock");
    if (!lock.held()) return in_memory(std::string(first.what()) + ", and it cannot be locked to move it aside");
    try {
      // Another process may have replaced it while we waited for the lock.
      return on_disk(path);
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
      return on_disk(path, "the cache '" + path + "' was damaged (" + first.what() + "); moved it to '" +
                               aside + "' and started a fresh one");
    } catch (const std::exception& e) {
      return in_memory(std::string("cannot create a fresh cache at '") + path + "' (" + e.what() + ")");
    }
  } catch (const std::exception& e) {
    return in_memory(std::string("cannot use the cache '") + path + "' (" + e.what() + ")");
  }
}

}  // namespace tilemm::cache
