#include "store_schema.hpp"

#include <string>
#include <tuple>
#include <vector>

#include "candidate_set.hpp"

namespace tilemm::cache {
namespace {

// Schema 1: the first layout (results and candidates, no provenance or spread).
const char* const kSchema1 = R"sql(
CREATE TABLE IF NOT EXISTS results (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL,
  winner TEXT NOT NULL, median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL,
  tuned_at TEXT NOT NULL, tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL,
  nvrtc_version INTEGER NOT NULL, driver_version INTEGER NOT NULL, arch TEXT NOT NULL,
  PRIMARY KEY (device_key, m, n, k, problem_class));
CREATE TABLE IF NOT EXISTS candidates (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL, variant TEXT NOT NULL,
  status TEXT NOT NULL, reason TEXT NOT NULL,
  median_ms REAL NOT NULL, min_ms REAL NOT NULL, samples INTEGER NOT NULL,
  PRIMARY KEY (device_key, m, n, k, problem_class, variant));
CREATE TABLE IF NOT EXISTS cubins (
  arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL, template_hash TEXT NOT NULL,
  variant TEXT NOT NULL, image BLOB NOT NULL,
  PRIMARY KEY (arch, nvrtc_version, template_hash, variant));
)sql";

// Schema 2: where a result came from (tuned here, imported, preloaded), the timing spread and
// compile time of each candidate.
const char* const kMigrate1To2 = R"sql(
ALTER TABLE results ADD COLUMN source TEXT NOT NULL DEFAULT 'tuned';
ALTER TABLE candidates ADD COLUMN spread REAL NOT NULL DEFAULT 0;
ALTER TABLE candidates ADD COLUMN compile_ms REAL NOT NULL DEFAULT 0;
)sql";

// Schema 3: leases, so that one process tunes a key while the others wait for its result.
const char* const kMigrate2To3 = R"sql(
CREATE TABLE leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
)sql";

// Schema 4: precision modes. Precision joins the key of results and candidates, so both tables
// are rebuilt (SQLite cannot change a primary key in place); every row of an older file was
// tuned with FP32 FFMA kernels, and keeps its meaning as precision 'highest'. Leases need no
// column: their key is a text the dispatcher builds from the whole shape key, precision included.
const char* const kMigrate3To4 = R"sql(
CREATE TABLE results_v4 (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL, precision TEXT NOT NULL DEFAULT 'highest',
  winner TEXT NOT NULL, median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL,
  tuned_at TEXT NOT NULL, tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL,
  nvrtc_version INTEGER NOT NULL, driver_version INTEGER NOT NULL, arch TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'tuned',
  PRIMARY KEY (device_key, m, n, k, problem_class, precision));
INSERT INTO results_v4 (device_key, m, n, k, problem_class, precision, winner, median_ms, tflops,
                        margin, tuned_at, tilemm_version, template_hash, nvrtc_version,
                        driver_version, arch, source)
  SELECT device_key, m, n, k, problem_class, 'highest', winner, median_ms, tflops, margin,
         tuned_at, tilemm_version, template_hash, nvrtc_version, driver_version, arch, source
  FROM results;
DROP TABLE results;
ALTER TABLE results_v4 RENAME TO results;
CREATE TABLE candidates_v4 (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL, precision TEXT NOT NULL DEFAULT 'highest', variant TEXT NOT NULL,
  status TEXT NOT NULL, reason TEXT NOT NULL,
  median_ms REAL NOT NULL, min_ms REAL NOT NULL, samples INTEGER NOT NULL,
  spread REAL NOT NULL DEFAULT 0, compile_ms REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (device_key, m, n, k, problem_class, precision, variant));
INSERT INTO candidates_v4 (device_key, m, n, k, problem_class, precision, variant, status, reason,
                           median_ms, min_ms, samples, spread, compile_ms)
  SELECT device_key, m, n, k, problem_class, 'highest', variant, status, reason, median_ms,
         min_ms, samples, spread, compile_ms
  FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_v4 RENAME TO candidates;
)sql";

// Schema 5: the candidate set a result was chosen from (candidate_set.hpp) joins the key of
// results and candidates, so both tables are rebuilt again. A row of an older file records no
// set: it is 'own_only' unless its winner or one of its candidates is a vendor candidate
// (inferred_candidate_set), decided by mark_vendor_tunings after the copy.
const char* const kMigrate4To5 = R"sql(
CREATE TABLE results_v5 (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL, precision TEXT NOT NULL, candidate_set TEXT NOT NULL,
  winner TEXT NOT NULL, median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL,
  tuned_at TEXT NOT NULL, tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL,
  nvrtc_version INTEGER NOT NULL, driver_version INTEGER NOT NULL, arch TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'tuned',
  PRIMARY KEY (device_key, m, n, k, problem_class, precision, candidate_set));
INSERT INTO results_v5 (device_key, m, n, k, problem_class, precision, candidate_set, winner,
                        median_ms, tflops, margin, tuned_at, tilemm_version, template_hash,
                        nvrtc_version, driver_version, arch, source)
  SELECT device_key, m, n, k, problem_class, precision, 'own_only', winner, median_ms, tflops,
         margin, tuned_at, tilemm_version, template_hash, nvrtc_version, driver_version, arch,
         source
  FROM results;
DROP TABLE results;
ALTER TABLE results_v5 RENAME TO results;
CREATE TABLE candidates_v5 (
  device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  problem_class TEXT NOT NULL, precision TEXT NOT NULL, candidate_set TEXT NOT NULL,
  variant TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
  median_ms REAL NOT NULL, min_ms REAL NOT NULL, samples INTEGER NOT NULL,
  spread REAL NOT NULL DEFAULT 0, compile_ms REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (device_key, m, n, k, problem_class, precision, candidate_set, variant));
INSERT INTO candidates_v5 (device_key, m, n, k, problem_class, precision, candidate_set, variant,
                           status, reason, median_ms, min_ms, samples, spread, compile_ms)
  SELECT device_key, m, n, k, problem_class, precision, 'own_only', variant, status, reason,
         median_ms, min_ms, samples, spread, compile_ms
  FROM candidates;
DROP TABLE candidates;
ALTER TABLE candidates_v5 RENAME TO candidates;
)sql";

using RowKey = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::string,
                          std::string>;

// The rows of schema 4 that were tuned with vendor candidates, by inferred_candidate_set's rule:
// their winner or a candidate is a vendor's. The keys are collected first, then updated, so that
// no table is written while it is read.
void mark_vendor_tunings(Database& db) {
  std::vector<RowKey> vendor_rows;
  {
    Statement names(db,
                    "SELECT device_key, m, n, k, problem_class, precision, winner FROM results "
                    "UNION SELECT device_key, m, n, k, problem_class, precision, variant "
                    "FROM candidates");
    while (names.step()) {
      if (inferred_candidate_set(names.text(6), {}) != CandidateSet::with_vendor) continue;
      RowKey key{names.text(0), names.int64(1), names.int64(2), names.int64(3), names.text(4),
                 names.text(5)};
      // Adjacent repeats are skipped; any other repeat only marks its row again.
      if (vendor_rows.empty() || vendor_rows.back() != key) vendor_rows.push_back(std::move(key));
    }
  }
  for (const char* table : {"results", "candidates"}) {
    Statement mark(db, std::string("UPDATE ") + table +
                           " SET candidate_set='with_vendor' WHERE device_key=?1 AND m=?2 AND "
                           "n=?3 AND k=?4 AND problem_class=?5 AND precision=?6");
    for (const RowKey& key : vendor_rows) {
      mark.reset();
      mark.bind(1, std::get<0>(key)).bind(2, std::get<1>(key)).bind(3, std::get<2>(key));
      mark.bind(4, std::get<3>(key)).bind(5, std::get<4>(key)).bind(6, std::get<5>(key));
      mark.run();
    }
  }
}

}  // namespace

void migrate_schema(Database& db, int version) {
  if (version == 0) {
    db.exec(kSchema1);
    version = 1;
  }
  if (version == 1) {
    db.exec(kMigrate1To2);
    version = 2;
  }
  if (version == 2) {
    db.exec(kMigrate2To3);
    version = 3;
  }
  if (version == 3) {
    db.exec(kMigrate3To4);
    version = 4;
  }
  if (version == 4) {
    db.exec(kMigrate4To5);
    mark_vendor_tunings(db);
  }
}

}  // namespace tilemm::cache
