#include "private_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tilemm/error.hpp"

namespace tilemm::cache {
namespace {

constexpr mode_t kOwnerOnlyFolder = 0700;
constexpr mode_t kOwnerOnlyFile = 0600;

[[noreturn]] void fail(const std::string& what, const std::string& path, int error) {
  throw Error(ErrorKind::cache,
              "tilemm: cannot " + what + " '" + path + "': " + std::strerror(error));
}

}  // namespace

void create_private_folders(const std::string& folder) {
  namespace fs = std::filesystem;
  if (folder.empty()) return;
  fs::path partial;
  for (const auto& part : fs::path(folder)) {
    partial /= part;
    struct stat st {};
    if (::stat(partial.c_str(), &st) == 0) continue;
    // EEXIST: another process created it since the stat().
    if (::mkdir(partial.c_str(), kOwnerOnlyFolder) != 0 && errno != EEXIST)
      fail("create the folder", partial.string(), errno);
  }
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) fail("create the folder", folder, errno);
  if (!S_ISDIR(st.st_mode)) fail("create the folder", folder, ENOTDIR);
}

void create_private_file(const std::string& path) {
  // O_EXCL: never open (let alone change) a file that exists, nor follow a link.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kOwnerOnlyFile);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  if (errno != EEXIST) fail("create the cache file", path, errno);
}

}  // namespace tilemm::cache
