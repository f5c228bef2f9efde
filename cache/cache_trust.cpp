#include "cache_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

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
  if (p.on_the_way && (p.mode & S_ISVTX) != 0) return "";
  const bool by_group = (p.mode & S_IWGRP) != 0;
  const bool by_others = (p.mode & S_IWOTH) != 0;
  const std::string where = p.on_the_way ? " (a folder on the way to the cache, without the sticky bit)" : "";
  if (by_group && by_others) return quoted + " is writable by its group and by others" + where;
  if (by_group) return quoted + " is writable by its group" + where;
  if (by_others) return quoted + " is writable by others" + where;
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

// What a lookup of a path passes through: the folders, each once, and the symbolic links it
// follows, with their owners (a link's own mode means nothing).
struct Way {
  std::vector<PathOwnership> paths;
  std::set<std::string> seen;
  int links_followed = 0;
};

constexpr int kMaxLinks = 40;  // Linux's limit on links followed in one lookup

bool add_folder(const fs::path& folder, Way& way, std::string& error) {
  if (!way.seen.insert(folder.string()).second) return true;
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    error = "cannot stat '" + folder.string() + "': " + std::strerror(errno);
    return false;
  }
  way.paths.push_back({folder.string(), st.st_uid, st.st_mode, true});
  return true;
}

// Walks the absolute `path` component by component as the kernel does, following each link from
// the folder that holds it. Sets `end` to where the path leads (links resolved).
bool walk(const fs::path& path, Way& way, fs::path& end, std::string& error) {
  fs::path at = path.root_path();
  if (!add_folder(at, way, error)) return false;
  std::vector<fs::path> parts;
  for (const fs::path& part : path.relative_path())
    if (!part.empty() && part != ".") parts.push_back(part);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "..") {
      at = at.parent_path();  // `at` holds no link, so its parent is the folder above
      continue;
    }
    const fs::path next = at / parts[i];
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      error = "cannot stat '" + next.string() + "': " + std::strerror(errno);
      return false;
    }
    if (S_ISLNK(st.st_mode)) {
      if (++way.links_followed > kMaxLinks) {
        error = "cannot resolve '" + path.string() + "': more than " + std::to_string(kMaxLinks) +
                " symbolic links";
        return false;
      }
      way.paths.push_back({next.string(), st.st_uid, 0, false});
      std::error_code ec;
      fs::path target = fs::read_symlink(next, ec);
      if (ec) {
        error = "cannot read the link '" + next.string() + "': " + ec.message();
        return false;
      }
      if (target.is_relative()) target = at / target;
      if (!walk(target, way, at, error)) return false;
    } else {
      at = next;
    }
    if (i + 1 < parts.size() && !add_folder(at, way, error)) return false;
  }
  end = at;
  return true;
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
  Way way;
  for (const auto& p : paths) way.seen.insert(p.path);  // checked above by the stricter rule
  fs::path end;
  std::string error;
  if (!walk(given, way, end, error)) return {false, error};
  paths.insert(paths.end(), way.paths.begin(), way.paths.end());
  return decide_cache_trust(paths, ::geteuid());
}

}  // namespace tilemm::cache
