// Whether the code stored in a cache may run in this process. Tuning results are data: a winner
// is a variant name, validated before use. A winner's CUBIN is code: once loaded, it runs with
// access to all of this process's device memory. So CUBINs are loaded only from a cache that no
// one but the current user (or root) can change: the database file, its side files and the
// folders holding them are owned by the user or root and writable by neither group nor others,
// the rule ssh applies to its own files. Any other cache is "shared": its results are used, and
// every kernel is compiled here instead of loaded from it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tilemm::cache {

struct CacheTrust {
  bool loads_stored_code = true;  // false: compile each kernel instead of loading the cache's CUBIN
  std::string reason;  // why not, naming the path: "'/x/tuning.db' is writable by its group"
};

// One path as stat() sees it (through symbolic links), or a symbolic link itself.
struct PathOwnership {
  std::string path;
  uid_t owner = 0;
  mode_t mode = 0;  // st_mode; only the group and others write bits, and the sticky bit, matter
  // A folder that the lookup of the cache passes through, above the ones that hold it: there the
  // sticky bit (as on /tmp) keeps others from renaming what they do not own, which is all that
  // matters, since the next path on the way is then checked for its owner.
  bool on_the_way = false;
};

// The rule, without touching the disk: stored code may be loaded when every path is owned by
// `user` or by root and writable by neither its group nor others (or, for a folder on the way,
// has the sticky bit). Otherwise the reason names the first path that breaks the rule and how.
// No paths: nothing can be checked, so nothing trusted.
CacheTrust decide_cache_trust(const std::vector<PathOwnership>& paths, uid_t user);

// The paths that decide over the cache at `db_path`: the database file (for a symbolic link, the
// file it points to, where SQLite also keeps the side files), its -wal, -shm and -journal files
// where they exist, the folder holding the file and, for a link, the folder holding the link
// (whoever can write there can point the link elsewhere); then every folder that the lookup of
// `db_path` passes through up to the root, and every symbolic link it follows (their owners),
// link by link: whoever can write one of those folders can put another file in the cache's place
// at any moment, also between this check and SQLite's open of the path.
//
// Returns decide_cache_trust over them for this process's effective user; a path that cannot be
// stat()ed, other than a side file that does not exist, makes the cache untrusted with the error
// as its reason. Never throws. Cost: a few stat() calls; reads no file. The answer holds for the
// moment it is asked: a caller decides once, when it opens the cache.
CacheTrust cache_trust(const std::string& db_path);

}  // namespace tilemm::cache
