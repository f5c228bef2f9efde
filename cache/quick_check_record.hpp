// When SQLite's quick_check runs on the cache. It reads every page, and a cache that holds CUBINs
// is tens of megabytes: run at every open, it was most of the time of a new process's first
// gemm() (docs/cache-format.md has the measurement). So a file is checked again only when it
// changed since it last passed: after a pass, the file's state (device, inode, size and
// modification time of the database file, and of its -wal where that holds frames) is recorded
// beside it, in "<path>.checked". A write of the store's own through SQLite moves the record
// along (OwnWrite); any other write, a truncation or a replaced file changes the state, and the
// next open checks. Damage that keeps every one of them (bits flipped in place) is found when
// SQLite reads the page instead, as any error of a query (a warning, the call goes on without
// the cache).
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

// One write (a commit, or the close that folds the -wal into the file) that this process makes
// through SQLite. Where the file was in its recorded state as the write began, the state after it
// is recorded too: SQLite changed a file that had passed, and it needs no new check. Without this
// every process that stores a tuning would leave a cache that the next process's first call reads
// whole. A change by anything else between the last pass and the write is not followed, so the
// next open checks; damage that lands during the write itself is missed, like damage that keeps
// the state. Cost: two stat() and reading the record before, as much and one rename after.
class OwnWrite {
 public:
  // Just before the write, under its lock where it takes one. An empty path or ":memory:" has
  // no record.
  explicit OwnWrite(const std::string& db_path);
  // After the write succeeded.
  void succeeded() noexcept;

 private:
  std::string db_path_;
  std::string state_before_;
  bool from_recorded_state_ = false;
};

}  // namespace tilemm::cache
