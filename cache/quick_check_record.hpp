// When SQLite's quick_check runs on the cache. It reads every page, and a cache that holds CUBINs
// is tens of megabytes: run at every open, it was most of the time of a new process's first
// gemm() (docs/cache-format.md has the measurement). So a file is checked again only when it
// changed since it last passed: after a pass, the file's state (device, inode, size and
// modification time of the database file, and of its -wal where that holds frames) is recorded
// beside it, in "<path>.checked". Any write, a truncation or a replaced file changes the state;
// damage that keeps every one of them (bits flipped in place) is found when SQLite reads the page
// instead, as any error of a query (a warning, the call goes on without the cache).
#pragma once

#include <string>

namespace tilemm::cache {

// The state of the cache file at `db_path` (through a symbolic link, the file it points to, where
// SQLite keeps the -wal), as one line of text; empty when it cannot be stat()ed. Cost: two stat().
std::string cache_file_state(const std::string& db_path);

// Where the state that last passed is recorded: db_path + ".checked".
std::string quick_check_record_path(const std::string& db_path);

// Whether `state` (non-empty, from cache_file_state) is the one recorded as having passed.
// Cost: reads one short file.
bool passed_quick_check_in(const std::string& db_path, const std::string& state);

// Records `state` as having passed: written to a temporary file (mode 0600) and renamed over the
// record, so a reader sees the old record or the new one. Never throws: a record that cannot be
// written (a folder the user cannot write) only means the check runs at the next open too.
void record_quick_check_pass(const std::string& db_path, const std::string& state) noexcept;

}  // namespace tilemm::cache
