// The SQLite store of tuning results: per (device model, shape, problem class, precision,
// candidate set) the winner, its statistics and every candidate's; and winners' CUBINs, so that a new process dispatches
// without NVRTC. One file shared by many processes (WAL, busy timeout, transactions).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "candidate_set.hpp"
#include "quick_check_record.hpp"
#include "sqlite_handle.hpp"
#include "store_schema.hpp"
#include "tilemm/autotune.hpp"

namespace tilemm::cache {

// The versions an entry was tuned under; an entry whose versions differ from the running ones
// is stale (see is_stale).
struct BuildVersions {
  // The results hash (dispatch::results_hash): the kernel templates of the entry's precision and
  // the tuner's timing method, so that a result timed another way is stale too.
  std::string template_hash;
  int nvrtc_version = 0;
  int driver_version = 0;
};

struct StoredEntry {
  std::string device_key;
  std::int64_t M = 0, N = 0, K = 0;
  std::string problem_class;
  Precision precision = Precision::highest;  // part of the key, with the fields above
  // What the winner was chosen from (candidate_set.hpp): part of the key too, so that a tuning
  // with own kernels only is stored beside one with vendor candidates, never over it.
  CandidateSet candidate_set = CandidateSet::with_vendor;
  std::string winner;
  double median_ms = 0.0, tflops = 0.0, margin = 0.0;
  std::string tuned_at;        // ISO-8601 UTC
  std::string tilemm_version;
  BuildVersions versions;
  std::string arch;            // "sm_90"
  std::string source = "tuned";  // tuned | imported | preloaded
  std::vector<CandidateResult> candidates;
};

// Stale: tuned under another driver, NVRTC or results hash (template set, timing method) than
// `current`. The one staleness rule, used by dispatch, the preloaded lookup and tilemm-tune
// --list alike (src/dispatch/provenance.hpp). A `current.driver_version` of 0 means the driver is
// unknown (no driver on this machine, e.g. listing a cache without a GPU): then the results hash
// and the NVRTC version alone decide. A preloaded entry (source "preloaded") is stale only under
// another results hash: a shipped result is a good guess, not a measurement here, so driver and
// NVRTC versions need not match; its templates and timing method must, so that its winner is the
// kernel that was timed, timed the way this build times.
// Cost: compares a few values.
bool is_stale(const StoredEntry& entry, const BuildVersions& current);

// A write of the store's own: BEGIN IMMEDIATE ... COMMIT, rolled back if not committed, that
// keeps the record of the file's last quick_check current across it (OwnWrite, begun under the
// write lock).
class OwnTransaction {
 public:
  explicit OwnTransaction(Database& db) : tx_(db), write_(db.path()) {}
  void commit() {
    tx_.commit();
    write_.succeeded();
  }

 private:
  Transaction tx_;
  OwnWrite write_;
};

class TuningStore {
 public:
  static constexpr int kSchemaVersion = kStoreSchemaVersion;  // store_schema.hpp

  // Opens or creates the store at `path` (":memory:" for a private one) and migrates older
  // schemas. Throws CacheCorrupt if the file is not a database or fails SQLite's quick_check
  // (run where the file changed since it last passed one: quick_check_record.hpp),
  // tilemm::Error (kind cache) if it cannot be opened for writing or was written by a newer
  // schema than this build understands (it is then left untouched).
  explicit TuningStore(const std::string& path);
  ~TuningStore();
  TuningStore(const TuningStore&) = delete;
  TuningStore& operator=(const TuningStore&) = delete;

  // The entry of this key, with its candidates when asked. One indexed query (two with
  // candidates). Which stored set may serve a caller is not the store's to say
  // (dispatch::sets_serving): it answers for the one set asked.
  std::optional<StoredEntry> find(const std::string& device_key, std::int64_t M, std::int64_t N,
                                  std::int64_t K, const std::string& problem_class,
                                  Precision precision, CandidateSet set,
                                  bool with_candidates = false) const;
  // The same for precision highest, chosen with vendor candidates: the key of every result
  // before precision modes and candidate sets.
  std::optional<StoredEntry> find(const std::string& device_key, std::int64_t M, std::int64_t N,
                                  std::int64_t K, const std::string& problem_class,
                                  bool with_candidates = false) const {
    return find(device_key, M, N, K, problem_class, Precision::highest, CandidateSet::with_vendor,
                with_candidates);
  }
  // Every entry (of one device model when device_key is not empty), with its candidates unless
  // asked not to: an entry holds hundreds, and reading them is most of a listing's cost.
  std::vector<StoredEntry> list(const std::string& device_key = "",
                                bool with_candidates = true) const;
  // The same entries in the same order, one at a time (an export holds one in memory).
  void for_each(const std::string& device_key,
                const std::function<void(StoredEntry&&)>& each) const {
    for_each(device_key, true, each);
  }
  // Inserts or replaces the entry and all its candidates, atomically.
  void put(const StoredEntry& entry);
  // Inserts or replaces several entries in one transaction: all or nothing.
  void put_all(const std::vector<StoredEntry>& entries);

  // Inserts or replaces entries one at a time in one transaction (BEGIN IMMEDIATE: it waits for,
  // then holds, the write lock), for more entries than should be held in memory at once. Nothing
  // is visible to other connections before commit(); destroyed uncommitted, it rolls back.
  class Writer {
   public:
    explicit Writer(TuningStore& store);
    void put(const StoredEntry& entry);
    void commit() { tx_.commit(); }

   private:
    OwnTransaction tx_;
    Statement delete_candidates_, put_result_, put_candidate_;
  };
  // Removes every entry and CUBIN; returns how many entries were removed.
  std::int64_t clear();

  std::optional<std::vector<char>> find_cubin(const std::string& arch, int nvrtc_version,
                                              const std::string& template_hash,
                                              const std::string& variant) const;
  // Whether find_cubin would find one, without reading the image.
  bool has_cubin(const std::string& arch, int nvrtc_version, const std::string& template_hash,
                 const std::string& variant) const;
  void put_cubin(const std::string& arch, int nvrtc_version, const std::string& template_hash,
                 const std::string& variant, const std::vector<char>& image);
  // How many CUBINs the store holds and their bytes: the disk cost of compiling once per machine.
  struct CubinTotals {
    std::int64_t count = 0;
    std::int64_t bytes = 0;
  };
  CubinTotals cubin_totals() const;

  // Cross-process leases, so that one process tunes a key while others wait for its result.
  // Takes the lease on `key` for `owner` unless another owner holds an unexpired one; true when
  // `owner` holds it afterwards. Expired leases (a process that died) are taken over.
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl_seconds);
  void release_lease(const std::string& key, const std::string& owner);

  int schema_version() const;
  const std::string& path() const { return db_.path(); }

 private:
  void for_each(const std::string& device_key, bool with_candidates,
                const std::function<void(StoredEntry&&)>& each) const;
  void migrate();
  void use_wal();
  mutable Database db_;
};

}  // namespace tilemm::cache
