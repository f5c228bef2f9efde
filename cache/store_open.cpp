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

// The one place that names a damaged file moved aside; the time tells several apart.
std::string aside_path(const std::string& path, const std::string& utc_time) {
  return path + ".corrupt-" + utc_time;
}

}  // namespace

std::string damaged_cache_note(const std::string& path, const std::string& why) {
  return "the cache '" + path + "' is damaged (" + why +
         "); the next tuning, gemm() call, --import or --clear will move it aside to '" +
         aside_path(path, "<UTC time>") + "' and start a fresh one";
}

OpenedStore open_store(const std::string& path) {
  try {
    return open_persistent_store(path);
  } catch (const std::exception& e) {
    return in_memory(e.what());
  }
}

OpenedStore open_persistent_store(const std::string& path) {
  namespace fs = std::filesystem;
  const auto cannot = [](const std::string& why) { return Error(ErrorKind::cache, why); };
  try {
    const auto parent = fs::path(path).parent_path();
    if (!parent.empty()) create_private_folders(parent.string());
  } catch (const std::exception& e) {
    throw cannot("cannot create the folder of the cache '" + path + "' (" + e.what() + ")");
  }
  try {
    return on_disk(path);
  } catch (const CacheCorrupt& first) {
    FileLock lock(path + ".lock");
    if (!lock.held()) throw cannot(std::string(first.what()) + ", and it cannot be locked to move it aside");
    try {
      // Another process may have replaced it while we waited for the lock.
      return on_disk(path);
    } catch (const CacheCorrupt&) {
    } catch (const std::exception& e) {
      throw cannot(std::string("cannot use the cache '") + path + "' (" + e.what() + ")");
    }
    const std::string aside = aside_path(path, detail::utc_now_text("%Y%m%dT%H%M%SZ"));
    std::error_code ec;
    fs::rename(path, aside, ec);
    if (ec) throw cannot(std::string(first.what()) + "; moving it aside failed: " + ec.message());
    for (const char* suffix : {"-wal", "-shm"}) fs::remove(path + suffix, ec);  // belonged to the damaged file
    try {
      return on_disk(path, "the cache '" + path + "' was damaged (" + first.reason() +
                               "); moved it to '" + aside + "' and started a fresh one");
    } catch (const std::exception& e) {
      throw cannot(std::string("cannot create a fresh cache at '") + path + "' (" + e.what() + ")");
    }
  } catch (const std::exception& e) {
    throw cannot(std::string("cannot use the cache '") + path + "' (" + e.what() + ")");
  }
}

}  // namespace tilemm::cache
