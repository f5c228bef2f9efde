#include "sqlite_handle.hpp"

#include "private_paths.hpp"
#include "tilemm/error.hpp"

namespace tilemm::cache {

std::filesystem::path sqlite_main_file(const std::string& db_path, std::error_code& error) {
  const std::filesystem::path given = std::filesystem::absolute(db_path, error);
  if (error) return given;
  return std::filesystem::canonical(given, error);
}

namespace {
// SQLite's text for `rc`, and its more specific message on `db` where it says more (the two are
// often the same sentence: "unable to open database file").
std::string sqlite_reason(sqlite3* db, int rc) {
  std::string reason = sqlite3_errstr(rc);
  if (db != nullptr && sqlite3_errcode(db) == rc) {
    const std::string detail = sqlite3_errmsg(db);
    if (detail != reason) reason += " (" + detail + ")";
  }
  return reason;
}

[[noreturn]] void fail(sqlite3* db, const std::string& path, int rc, const std::string& what) {
  const std::string message =
      "tilemm: SQLite " + what + " on '" + path + "' failed: " + sqlite_reason(db, rc);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) throw CacheCorrupt(message, sqlite3_errstr(rc));
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) throw CacheBusy(message);
  throw Error(ErrorKind::cache, message);
}
}  // namespace

Database::Database(const std::string& path, bool read_only) : path_(path) {
  // SQLite would create a new file 0644 (less the umask); created here first, it is 0600.
  const bool names_a_file = !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
  if (!read_only && names_a_file) create_private_file(path);
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_FULLMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message =
        "tilemm: SQLite open of '" + path + "' failed: " + sqlite_reason(db_, rc);
    sqlite3_close(db_);  // a no-op on nullptr
    db_ = nullptr;
    throw Error(ErrorKind::cache, message);
  }
  // Several processes share the file: wait for a lock (up to 30 s) instead of failing at once.
  check(sqlite3_busy_timeout(db_, 30000), "busy_timeout on '" + path + "'");
}

Database::~Database() { close(); }

void Database::close() noexcept {
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

void Database::exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc != SQLITE_OK) {
    std::string message = "tilemm: SQLite '" + sql.substr(0, 80) + "' on '" + path_ +
                          "' failed: " + (error != nullptr ? error : sqlite3_errstr(rc));
    sqlite3_free(error);
    if ((rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB)
      throw CacheCorrupt(message, sqlite3_errstr(rc));
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) throw CacheBusy(message);
    throw Error(ErrorKind::cache, message);
  }
}

void Database::check(int rc, const std::string& what) const {
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) fail(db_, path_, rc, what);
}

Statement::Statement(const Database& db, const std::string& sql) : db_(db), sql_(sql) {
  db_.check(sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &stmt_, nullptr),
            "prepare of '" + sql.substr(0, 80) + "'");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::int64_t value) {
  db_.check(sqlite3_bind_int64(stmt_, index, value), "bind in '" + sql_.substr(0, 60) + "'");
  return *this;
}
Statement& Statement::bind(int index, double value) {
  db_.check(sqlite3_bind_double(stmt_, index, value), "bind in '" + sql_.substr(0, 60) + "'");
  return *this;
}
Statement& Statement::bind(int index, const std::string& value) {
  db_.check(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()),
                              SQLITE_TRANSIENT),
            "bind in '" + sql_.substr(0, 60) + "'");
  return *this;
}
Statement& Statement::bind_blob(int index, const std::vector<char>& value) {
  db_.check(sqlite3_bind_blob(stmt_, index, value.data(), static_cast<int>(value.size()),
                              SQLITE_TRANSIENT),
            "bind in '" + sql_.substr(0, 60) + "'");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_.get(), db_.path(), rc, "step of '" + sql_.substr(0, 80) + "'");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }
std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p == nullptr ? std::string()
                      : std::string(reinterpret_cast<const char*>(p),
                                    static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}
std::vector<char> Statement::blob(int column) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, column));
  const int n = sqlite3_column_bytes(stmt_, column);
  return p == nullptr ? std::vector<char>() : std::vector<char>(p, p + n);
}
bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {  // nothing more can be done in a destructor; the change is not applied
    }
  }
}
void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace tilemm::cache
