// RAII for sqlite3 and sqlite3_stmt, and a check that turns every SQLite failure into a
// tilemm::Error naming the statement and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <system_error>
#include <string>
#include <vector>

#include "tilemm/error.hpp"

namespace tilemm::cache {

// The file is not an SQLite database, or its pages are damaged (SQLITE_NOTADB, SQLITE_CORRUPT,
// or a failed quick_check): the caller may move it aside and start a fresh one.
class CacheCorrupt : public Error {
 public:
  // `reason`: what is wrong with the file in a few words, for messages that name it already
  // ("file is not a database"); what() is the full message.
  CacheCorrupt(const std::string& message, std::string reason)
      : Error(ErrorKind::cache, message), reason_(std::move(reason)) {}
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

// Another connection held a lock for longer than the busy timeout allowed, or (for the few
// operations SQLite does not retry, such as switching the journal mode) held it at all.
class CacheBusy : public Error {
 public:
  explicit CacheBusy(const std::string& message) : Error(ErrorKind::cache, message) {}
};

// The file SQLite opens for `db_path`: through symbolic links, the file they lead to, beside which
// SQLite keeps the side files (`-wal`, `-shm`, `-journal`: the file's name plus the suffix). Sets
// `error` when the path cannot be resolved (a dangling link, a missing folder).
std::filesystem::path sqlite_main_file(const std::string& db_path, std::error_code& error);

class Database {
 public:
  // Opens (creating if needed) the SQLite file at `path`; ":memory:" for a private one. A file
  // it creates is 0600 (private_paths.hpp); an existing one keeps its mode.
  // Throws tilemm::Error (kind cache) with SQLite's reason, or why the file cannot be created.
  explicit Database(const std::string& path, bool read_only = false);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Closes the connection now (the destructor then does nothing). The last connection to a WAL
  // file folds the -wal into it here.
  void close() noexcept;
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  // Runs one or more statements that return no rows.
  void exec(const std::string& sql);
  // Throws tilemm::Error naming `what` when `rc` is not one of the success codes.
  void check(int rc, const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

class Statement {
 public:
  Statement(const Database& db, const std::string& sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind_blob(int index, const std::vector<char>& value);
  // Steps once: true while a row is available, false when done. Throws on errors.
  bool step();
  // Runs a statement that returns no rows.
  void run() {
    while (step()) {
    }
  }
  void reset();

  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::vector<char> blob(int column) const;
  bool is_null(int column) const;

 private:
  const Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back if not committed: every multi-row change is atomic,
// and IMMEDIATE takes the write lock up front so concurrent writers wait (busy timeout) instead
// of failing halfway with SQLITE_BUSY.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

}  // namespace tilemm::cache
