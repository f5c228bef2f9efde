// Creating the cache's folder and file so that only their owner can write them: what tilemm
// creates passes the cache_trust.hpp rule without the user doing anything. Paths that exist are
// never changed: a file someone points TILEMM_CACHE at may be a team's, and its modes are theirs.
#pragma once

#include <string>

namespace tilemm::cache {

// Creates `folder` and its missing parents, each new one with mode 0700 (the umask can only
// narrow that); folders that exist are left as they are. Throws tilemm::Error (kind cache) naming
// the folder that could not be created and why. Cost: one stat() or mkdir() per component.
void create_private_folders(const std::string& folder);

// Creates an empty file at `path` with mode 0600 when nothing is there (an empty file is an
// empty SQLite database; SQLite then gives the -wal and -shm files it creates the same mode).
// Anything already at `path`, a dangling symbolic link included, is left alone. Throws
// tilemm::Error (kind cache) when the file neither exists nor can be created. Cost: one open().
void create_private_file(const std::string& path);

}  // namespace tilemm::cache
