#include "cache_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sqlite_handle.hpp"

namespace tilemm::cache {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kRoot = 0;  // root can change any file anyway; ssh accepts its files too

// Why this one path lets someone else change the cache; empty when it does not.
std::string why_untrusted(const PathOwnership& p, uid_t user) {
  const std::string quoted = "'" + p.path + "'";
  if (p.owner != user && p.owner != kRoot)
    return quoted + " is owned by uid " + std::to_string(p.owner) + ", not by you (uid " +
           std::to_string(user) + ")";
  const bool by_group = (p.mode & S_IWGRP) != 0;
  const bool by_others = (p.mode & S_IWOTH) != 0;
  if (by_group && by_others) return quoted + " is writable by its group and by others";
  if (by_group) return quoted + " is writable by its group";
  if (by_others) return quoted + " is writable by others";
  return "";
}

struct Stat {
  bool exists = false;
  PathOwnership ownership;
  std::string error;  // why stat() failed, other than the path not existing
};

Stat stat_path(const std::string& path) {
  Stat s;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) s.error = "cannot stat '" + path + "': " + std::strerror(errno);
    return s;
  }
  s.exists = true;
  s.ownership = {path, st.st_uid, st.st_mode};
  return s;
}

std::string folder_of(const fs::path& file) {
  const fs::path parent = file.parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

CacheTrust decide_cache_trust(const std::vector<PathOwnership>& paths, uid_t user) {
  if (paths.empty()) return {false, "no path of the cache could be checked"};
  for (const auto& p : paths)
    if (std::string why = why_untrusted(p, user); !why.empty()) return {false, why};
  return {true, ""};
}

CacheTrust cache_trust(const std::string& db_path) {
  std::error_code ec;
  const fs::path given = fs::absolute(db_path, ec);
  if (ec) return {false, "cannot resolve '" + db_path + "': " + ec.message()};
  const fs::path target = sqlite_main_file(db_path, ec);
  if (ec) return {false, "cannot resolve '" + given.string() + "': " + ec.message()};

  std::vector<std::string> required = {target.string(), folder_of(target)};
  if (folder_of(given) != folder_of(target)) required.push_back(folder_of(given));
  std::vector<PathOwnership> paths;
  for (const auto& path : required) {
    const Stat s = stat_path(path);
    if (!s.exists)
      return {false, s.error.empty() ? "'" + path + "' does not exist" : s.error};
    paths.push_back(s.ownership);
  }
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const Stat s = stat_path(target.string() + suffix);
    if (!s.error.empty()) return {false, s.error};
    if (s.exists) paths.push_back(s.ownership);
  }
  return decide_cache_trust(paths, ::geteuid());
}

}  // namespace tilemm::cache
