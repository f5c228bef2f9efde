#include "tuning_store.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "quick_check_record.hpp"
#include "tilemm/error.hpp"

namespace tilemm::cache {

bool is_stale(const StoredEntry& e, const BuildVersions& current) {
  if (e.versions.template_hash != current.template_hash) return true;
  if (e.source == "preloaded") return false;  // a shipped guess: only its kernels must exist
  const bool driver_known = current.driver_version != 0;
  return e.versions.nvrtc_version != current.nvrtc_version ||
         (driver_known && e.versions.driver_version != current.driver_version);
}

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

const char* const kResultColumns =
    "device_key, m, n, k, problem_class, winner, median_ms, tflops, margin, tuned_at, "
    "tilemm_version, template_hash, nvrtc_version, driver_version, arch, source, precision, "
    "candidate_set";

Precision precision_column(const Statement& s, int column) {
  const std::string text = s.text(column);
  if (const auto p = parse_precision(text)) return *p;
  throw Error(ErrorKind::cache, "tilemm: the cache holds an entry of unknown precision '" + text +
                                    "' (written by a newer tilemm?)");
}

StoredEntry read_entry(const Statement& s) {
  StoredEntry e;
  e.device_key = s.text(0);
  e.M = s.int64(1);
  e.N = s.int64(2);
  e.K = s.int64(3);
  e.problem_class = s.text(4);
  e.winner = s.text(5);
  e.median_ms = s.real(6);
  e.tflops = s.real(7);
  e.margin = s.real(8);
  e.tuned_at = s.text(9);
  e.tilemm_version = s.text(10);
  e.versions.template_hash = s.text(11);
  e.versions.nvrtc_version = static_cast<int>(s.int64(12));
  e.versions.driver_version = static_cast<int>(s.int64(13));
  e.arch = s.text(14);
  e.source = s.text(15);
  e.precision = precision_column(s, 16);
  const std::string set = s.text(17);
  const auto parsed = parse_candidate_set(set);
  if (!parsed)
    throw Error(ErrorKind::cache, "tilemm: the cache holds an entry of unknown candidate set '" +
                                      set + "' (written by a newer tilemm?)");
  e.candidate_set = *parsed;
  return e;
}

void read_candidates(const Database& db, StoredEntry& e) {
  Statement s(db,
              "SELECT variant, status, reason, median_ms, min_ms, spread, samples, compile_ms "
              "FROM candidates WHERE device_key=?1 AND m=?2 AND n=?3 AND k=?4 AND "
              "problem_class=?5 AND precision=?6 AND candidate_set=?7");
  s.bind(1, e.device_key).bind(2, e.M).bind(3, e.N).bind(4, e.K).bind(5, e.problem_class);
  s.bind(6, std::string(to_string(e.precision))).bind(7, std::string(to_string(e.candidate_set)));
  while (s.step()) {
    CandidateResult c;
    c.variant = s.text(0);
    try {
      c.status = candidate_status_from_string(s.text(1));
    } catch (const InvalidArgument&) {  // a value of the file, not of the caller
      throw Error(ErrorKind::cache, "tilemm: the cache holds a candidate of unknown status '" +
                                        s.text(1) + "' (written by a newer tilemm?)");
    }
    c.reason = s.text(2);
    c.stats.median_ms = s.real(3);
    c.stats.min_ms = s.real(4);
    c.stats.spread = s.real(5);
    c.stats.samples = static_cast<int>(s.int64(6));
    c.compile_ms = s.real(7);
    e.candidates.push_back(std::move(c));
  }
}

}  // namespace

TuningStore::TuningStore(const std::string& path) : db_(path) {
  // Before the first read, which creates the -wal of a WAL database.
  const std::string state = path == ":memory:" ? std::string() : cache_file_state(path);
  // Reading the schema version is the first real read: a file that is not a database fails here.
  const int version = schema_version();
  const bool recorded = passed_quick_check_in(path, state);
  if (!recorded) {
    // A truncated or overwritten file can still have a readable first page.
    Statement check(db_, "PRAGMA quick_check");
    const std::string verdict = check.step() ? check.text(0) : "no answer";
    if (verdict != "ok") {
      std::string reason = "failed SQLite's quick_check: " + verdict;
      std::replace(reason.begin(), reason.end(), '\n', ' ');  // its report may span lines
      throw CacheCorrupt("tilemm: cache '" + path + "' " + reason, reason);
    }
  }
  if (version < 0) {
    const std::string reason = "has schema version " + std::to_string(version) + ", which no tilemm writes";
    throw CacheCorrupt("tilemm: cache '" + path + "' " + reason, reason);
  }
  if (version == kSchemaVersion) {
    // A file of this version lacking a table would fail every query without being corrupt to
    // SQLite: it is moved aside like one instead.
    Statement tables(db_, "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN "
                          "('results', 'candidates', 'cubins', 'leases')");
    if (!tables.step() || tables.int64(0) != 4) {
      const std::string reason = "has schema version " + std::to_string(version) + " but lacks its tables";
      throw CacheCorrupt("tilemm: cache '" + path + "' " + reason, reason);
    }
  }
  if (version > kSchemaVersion)
    throw Error(ErrorKind::cache, "tilemm: cache '" + path + "' has schema version " +
                                      std::to_string(version) + ", newer than this build's " +
                                      std::to_string(kSchemaVersion) +
                                      "; it is left untouched (upgrade tilemm or use another "
                                      "TILEMM_CACHE)");
  if (path != ":memory:") use_wal();
  db_.exec("PRAGMA synchronous=NORMAL");
  migrate();
  // Recorded after the journal mode and a migration, this store's own first writes, so that
  // they do not make the next open check again.
  if (path != ":memory:") {
    const std::string now = cache_file_state(path);
    if (!recorded || now != state) record_quick_check_pass(path, now);
  }
}

TuningStore::~TuningStore() {
  // The last connection's close folds the -wal into the file: a write of the store's own.
  OwnWrite close_write(db_.path());
  db_.close();
  close_write.succeeded();
}

void TuningStore::use_wal() {
  // WAL lets readers proceed while one process writes, and it is a property of the file: once
  // one process switched it, the others find it so and need no lock.
  {
    Statement mode(db_, "PRAGMA journal_mode");
    if (mode.step() && mode.text(0) == "wal") return;
  }
  // Switching needs a moment without other connections, and SQLite does not run the busy
  // handler for it: when several processes create the file at once, retry for a while.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int attempt = 0;; ++attempt) {
    try {
      Statement wal(db_, "PRAGMA journal_mode=WAL");
      wal.run();
      return;
    } catch (const CacheBusy&) {
      if (std::chrono::steady_clock::now() > deadline) throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(5 + 5 * std::min(attempt, 20)));
    }
  }
}

int TuningStore::schema_version() const {
  Statement s(db_, "PRAGMA user_version");
  return s.step() ? static_cast<int>(s.int64(0)) : 0;
}

void TuningStore::migrate() {
  if (schema_version() == kSchemaVersion) return;
  Transaction tx(db_);
  // Re-read under the write lock: another process may have migrated meanwhile.
  migrate_schema(db_, schema_version());
  db_.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

std::optional<StoredEntry> TuningStore::find(const std::string& device_key, std::int64_t M,
                                             std::int64_t N, std::int64_t K,
                                             const std::string& problem_class,
                                             Precision precision, CandidateSet set,
                                             bool with_candidates) const {
  Statement s(db_, std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE device_key=?1 AND m=?2 AND n=?3 AND k=?4 AND "
                       "problem_class=?5 AND precision=?6 AND candidate_set=?7");
  s.bind(1, device_key).bind(2, M).bind(3, N).bind(4, K).bind(5, problem_class);
  s.bind(6, std::string(to_string(precision))).bind(7, std::string(to_string(set)));
  if (!s.step()) return std::nullopt;
  StoredEntry e = read_entry(s);
  if (with_candidates) read_candidates(db_, e);
  return e;
}

std::vector<StoredEntry> TuningStore::list(const std::string& device_key,
                                           bool with_candidates) const {
  std::vector<StoredEntry> out;
  for_each(device_key, with_candidates, [&](StoredEntry&& e) { out.push_back(std::move(e)); });
  return out;
}

void TuningStore::for_each(const std::string& device_key, bool with_candidates,
                           const std::function<void(StoredEntry&&)>& each) const {
  Statement s(db_, std::string("SELECT ") + kResultColumns +
                       " FROM results WHERE ?1 = '' OR device_key = ?1 "
                       "ORDER BY device_key, problem_class, precision, m, n, k, candidate_set");
  s.bind(1, device_key);
  while (s.step()) {
    StoredEntry e = read_entry(s);
    if (with_candidates) read_candidates(db_, e);
    each(std::move(e));
  }
}

TuningStore::Writer::Writer(TuningStore& store)
    : tx_(store.db_),
      delete_candidates_(store.db_,
                         "DELETE FROM candidates WHERE device_key=?1 AND m=?2 AND n=?3 AND k=?4 "
                         "AND problem_class=?5 AND precision=?6 AND candidate_set=?7"),
      put_result_(store.db_, std::string("INSERT OR REPLACE INTO results (") + kResultColumns +
                                 ") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,"
                                 "?17,?18)"),
      put_candidate_(store.db_,
                     "INSERT INTO candidates (device_key, m, n, k, problem_class, variant, status, "
                     "reason, median_ms, min_ms, spread, samples, compile_ms, precision, "
                     "candidate_set) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)") {}

void TuningStore::Writer::put(const StoredEntry& e) {
  Statement& del = delete_candidates_;
  del.reset();
  const std::string precision = to_string(e.precision);
  const std::string set = to_string(e.candidate_set);
  del.bind(1, e.device_key).bind(2, e.M).bind(3, e.N).bind(4, e.K).bind(5, e.problem_class);
  del.bind(6, precision).bind(7, set);
  del.run();
  Statement& ins = put_result_;
  ins.reset();
  ins.bind(1, e.device_key).bind(2, e.M).bind(3, e.N).bind(4, e.K).bind(5, e.problem_class);
  ins.bind(6, e.winner).bind(7, e.median_ms).bind(8, e.tflops).bind(9, e.margin);
  ins.bind(10, e.tuned_at).bind(11, e.tilemm_version).bind(12, e.versions.template_hash);
  ins.bind(13, static_cast<std::int64_t>(e.versions.nvrtc_version));
  ins.bind(14, static_cast<std::int64_t>(e.versions.driver_version));
  ins.bind(15, e.arch).bind(16, e.source).bind(17, precision).bind(18, set);
  ins.run();
  Statement& cand = put_candidate_;
  for (const auto& c : e.candidates) {
    cand.reset();
    cand.bind(1, e.device_key).bind(2, e.M).bind(3, e.N).bind(4, e.K).bind(5, e.problem_class);
    cand.bind(6, c.variant).bind(7, std::string(to_string(c.status))).bind(8, c.reason);
    cand.bind(9, c.stats.median_ms).bind(10, c.stats.min_ms).bind(11, c.stats.spread);
    cand.bind(12, static_cast<std::int64_t>(c.stats.samples)).bind(13, c.compile_ms);
    cand.bind(14, precision).bind(15, set);
    cand.run();
  }
}

void TuningStore::put(const StoredEntry& entry) { put_all({entry}); }

void TuningStore::put_all(const std::vector<StoredEntry>& entries) {
  Writer writer(*this);
  for (const auto& e : entries) writer.put(e);
  writer.commit();
}

std::int64_t TuningStore::clear() {
  OwnTransaction tx(db_);
  std::int64_t removed = 0;
  {
    Statement count(db_, "SELECT COUNT(*) FROM results");
    if (count.step()) removed = count.int64(0);
  }
  db_.exec("DELETE FROM candidates; DELETE FROM results; DELETE FROM cubins; DELETE FROM leases;");
  tx.commit();
  return removed;
}

bool TuningStore::try_acquire_lease(const std::string& key, const std::string& owner,
                                    double ttl_seconds) {
  OwnTransaction tx(db_);
  const double now = unix_now();
  Statement take(db_,
                 "INSERT INTO leases (key, owner, expires_at) VALUES (?1, ?2, ?3) "
                 "ON CONFLICT(key) DO UPDATE SET owner=excluded.owner, expires_at=excluded.expires_at "
                 "WHERE leases.expires_at < ?4 OR leases.owner = excluded.owner");
  take.bind(1, key).bind(2, owner).bind(3, now + ttl_seconds).bind(4, now);
  take.run();
  Statement holder(db_, "SELECT owner FROM leases WHERE key = ?1");
  holder.bind(1, key);
  const bool mine = holder.step() && holder.text(0) == owner;
  tx.commit();
  return mine;
}

void TuningStore::release_lease(const std::string& key, const std::string& owner) {
  OwnTransaction tx(db_);
  Statement s(db_, "DELETE FROM leases WHERE key = ?1 AND owner = ?2");
  s.bind(1, key).bind(2, owner);
  s.run();
  tx.commit();
}

std::optional<std::vector<char>> TuningStore::find_cubin(const std::string& arch,
                                                         int nvrtc_version,
                                                         const std::string& template_hash,
                                                         const std::string& variant) const {
  Statement s(db_,
              "SELECT image FROM cubins WHERE arch=?1 AND nvrtc_version=?2 AND template_hash=?3 "
              "AND variant=?4");
  s.bind(1, arch).bind(2, static_cast<std::int64_t>(nvrtc_version)).bind(3, template_hash);
  s.bind(4, variant);
  if (!s.step()) return std::nullopt;
  return s.blob(0);
}

bool TuningStore::has_cubin(const std::string& arch, int nvrtc_version,
                            const std::string& template_hash, const std::string& variant) const {
  Statement s(db_,
              "SELECT 1 FROM cubins WHERE arch=?1 AND nvrtc_version=?2 AND template_hash=?3 "
              "AND variant=?4");
  s.bind(1, arch).bind(2, static_cast<std::int64_t>(nvrtc_version)).bind(3, template_hash);
  s.bind(4, variant);
  return s.step();
}

void TuningStore::put_cubin(const std::string& arch, int nvrtc_version,
                            const std::string& template_hash, const std::string& variant,
                            const std::vector<char>& image) {
  OwnTransaction tx(db_);
  Statement s(db_,
              "INSERT OR REPLACE INTO cubins (arch, nvrtc_version, template_hash, variant, image) "
              "VALUES (?1,?2,?3,?4,?5)");
  s.bind(1, arch).bind(2, static_cast<std::int64_t>(nvrtc_version)).bind(3, template_hash);
  s.bind(4, variant).bind_blob(5, image);
  s.run();
  tx.commit();
}

TuningStore::CubinTotals TuningStore::cubin_totals() const {
  Statement s(db_, "SELECT COUNT(*), COALESCE(SUM(LENGTH(image)), 0) FROM cubins");
  CubinTotals totals;
  if (s.step()) {
    totals.count = s.int64(0);
    totals.bytes = s.int64(1);
  }
  return totals;
}

}  // namespace tilemm::cache
