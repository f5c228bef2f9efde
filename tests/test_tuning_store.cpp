// The SQLite store on the CPU: round trip, migration, staleness, and many writer processes.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stored_entry_check.hpp"
#include "temp_dir.hpp"
#include "tilemm/error.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {
namespace {

StoredEntry sample_entry(std::int64_t m = 512) {
  StoredEntry e;
  e.device_key = "NVIDIA H200|sm_90|132sm|143771MiB";
  e.M = m;
  e.N = 256;
  e.K = 1024;
  e.problem_class = "a4-dense";
  e.winner = "tiled_t32_p0";
  e.median_ms = 0.125;
  e.tflops = 2.0 * double(m) * 256 * 1024 / 0.125e-3 / 1e12;
  e.margin = 0.04;
  e.tuned_at = "2026-11-29T12:00:00Z";
  e.tilemm_version = "0.1.0";
  e.versions = {"0123456789abcdef", 13000, 13000};
  e.arch = "sm_90";
  e.source = "tuned";
  CandidateResult ok;
  ok.variant = "tiled_t32_p0";
  ok.stats = {0.125, 0.12, 0.03, 40};
  ok.compile_ms = 21.5;
  CandidateResult wrong;
  wrong.variant = "tiled_t8_p1";
  wrong.status = CandidateStatus::wrong_result;
  wrong.reason = "3 of 131072 elements wrong";
  CandidateResult cannot;
  cannot.variant = "tiled_t16_p0";
  cannot.status = CandidateStatus::cannot_run;
  cannot.reason = "needs alignment 4";
  e.candidates = {ok, wrong, cannot};
  return e;
}

TEST(TuningStore, EntryRoundTripsThroughAFile) {
  testing::TempDir dir;
  const auto entry = sample_entry();
  {
    TuningStore store(dir.file("t.db"));
    store.put(entry);
  }
  TuningStore reopened(dir.file("t.db"));
  const auto found = reopened.find(entry.device_key, 512, 256, 1024, "a4-dense", true);
  ASSERT_TRUE(found.has_value());
  testing::expect_same_entry(*found, entry, testing::CandidateOrder::by_variant);
  EXPECT_FALSE(reopened.find(entry.device_key, 512, 256, 1024, "a1-dense").has_value());
  EXPECT_FALSE(reopened.find(entry.device_key, 512, 256, 1023, "a4-dense").has_value());
  EXPECT_EQ(reopened.schema_version(), TuningStore::kSchemaVersion);
}

TEST(TuningStore, PutReplacesTheEntryAndAllItsCandidates) {
  testing::TempDir dir;
  TuningStore store(dir.file("t.db"));
  store.put(sample_entry());
  auto second = sample_entry();
  second.winner = "tiled_t16_p0";
  second.candidates.resize(1);
  second.candidates[0].variant = "tiled_t16_p0";
  store.put(second);
  const auto found = store.find(second.device_key, 512, 256, 1024, "a4-dense", true);
  ASSERT_TRUE(found.has_value());
  testing::expect_same_entry(*found, second, testing::CandidateOrder::by_variant);
  EXPECT_EQ(store.list().size(), 1u);
}

TEST(TuningStore, AListingWithoutCandidatesHoldsTheSameEntries) {
  testing::TempDir dir;
  TuningStore store(dir.file("t.db"));
  store.put_all({sample_entry(512), sample_entry(640)});
  auto other_model = sample_entry(768);
  other_model.device_key = "NVIDIA A100|sm_80|108sm|81038MiB";
  store.put(other_model);
  const auto full = store.list(sample_entry().device_key);
  const auto headers = store.list(sample_entry().device_key, false);
  ASSERT_EQ(full.size(), 2u);
  ASSERT_EQ(headers.size(), 2u);
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(full[i].candidates.size(), 3u);
    auto without = full[i];
    without.candidates.clear();
    testing::expect_same_entry(headers[i], without, testing::CandidateOrder::same);
  }
  EXPECT_EQ(store.list("", false).size(), 3u);
}

TEST(TuningStore, CubinsAreKeyedByArchNvrtcTemplateAndVariant) {
  testing::TempDir dir;
  TuningStore store(dir.file("t.db"));
  const std::vector<char> image = {'\x7f', 'E', 'L', 'F', '\0', '\x01', '\xff'};
  store.put_cubin("sm_90", 13000, "hash-a", "tiled_t32_p0", image);
  EXPECT_EQ(store.find_cubin("sm_90", 13000, "hash-a", "tiled_t32_p0"), image);
  EXPECT_FALSE(store.find_cubin("sm_80", 13000, "hash-a", "tiled_t32_p0").has_value());
  EXPECT_FALSE(store.find_cubin("sm_90", 13010, "hash-a", "tiled_t32_p0").has_value());
  EXPECT_FALSE(store.find_cubin("sm_90", 13000, "hash-b", "tiled_t32_p0").has_value());
  EXPECT_FALSE(store.find_cubin("sm_90", 13000, "hash-a", "tiled_t16_p0").has_value());
  // has_cubin answers as find_cubin does, key field by key field.
  EXPECT_TRUE(store.has_cubin("sm_90", 13000, "hash-a", "tiled_t32_p0"));
  EXPECT_FALSE(store.has_cubin("sm_80", 13000, "hash-a", "tiled_t32_p0"));
  EXPECT_FALSE(store.has_cubin("sm_90", 13010, "hash-a", "tiled_t32_p0"));
  EXPECT_FALSE(store.has_cubin("sm_90", 13000, "hash-b", "tiled_t32_p0"));
  EXPECT_FALSE(store.has_cubin("sm_90", 13000, "hash-a", "tiled_t16_p0"));
}

TEST(TuningStore, StalenessIsDecidedPerEntry) {
  const BuildVersions now{"0123456789abcdef", 13000, 13000};
  auto fresh = sample_entry();
  EXPECT_FALSE(is_stale(fresh, now));
  auto other_driver = fresh;
  other_driver.versions.driver_version = 12080;
  EXPECT_TRUE(is_stale(other_driver, now));
  auto other_nvrtc = fresh;
  other_nvrtc.versions.nvrtc_version = 12090;
  EXPECT_TRUE(is_stale(other_nvrtc, now));
  auto other_templates = fresh;
  other_templates.versions.template_hash = "fedcba9876543210";
  EXPECT_TRUE(is_stale(other_templates, now));

  // In one store, the stale entry does not make its neighbour stale.
  testing::TempDir dir;
  TuningStore store(dir.file("t.db"));
  other_driver.M = 1024;
  store.put_all({fresh, other_driver});
  const auto a = store.find(fresh.device_key, 512, 256, 1024, "a4-dense");
  const auto b = store.find(fresh.device_key, 1024, 256, 1024, "a4-dense");
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(is_stale(*a, now));
  EXPECT_TRUE(is_stale(*b, now));
}

TEST(TuningStore, WithoutADriverOnlyTheTemplatesAndNvrtcDecideStaleness) {
  // Driver version 0: no driver here (tilemm-tune --list on a machine without a GPU), so an
  // entry tuned under any driver is fresh if its templates and NVRTC match, and stale if not.
  const BuildVersions no_driver{"0123456789abcdef", 13000, 0};
  auto entry = sample_entry();
  entry.versions.driver_version = 12080;
  EXPECT_FALSE(is_stale(entry, no_driver));
  auto other_nvrtc = entry;
  other_nvrtc.versions.nvrtc_version = 12090;
  EXPECT_TRUE(is_stale(other_nvrtc, no_driver));
  auto other_templates = entry;
  other_templates.versions.template_hash = "fedcba9876543210";
  EXPECT_TRUE(is_stale(other_templates, no_driver));
  // With a known driver, the same entry is stale.
  EXPECT_TRUE(is_stale(entry, BuildVersions{"0123456789abcdef", 13000, 13000}));
}

// A preloaded entry is a shipped guess: only its templates must be this build's (so that its
// winner is the kernel that was timed); another driver or NVRTC does not make it stale.
TEST(TuningStore, APreloadedEntryIsStaleOnlyUnderOtherTemplates) {
  const BuildVersions here{"0123456789abcdef", 13000, 13000};
  auto shipped = sample_entry();
  shipped.source = "preloaded";
  shipped.versions = {"0123456789abcdef", 12090, 12080};
  EXPECT_FALSE(is_stale(shipped, here));
  auto tuned = shipped;
  tuned.source = "imported";  // the same versions in the user's cache: measured elsewhere
  EXPECT_TRUE(is_stale(tuned, here));
  shipped.versions.template_hash = "fedcba9876543210";
  EXPECT_TRUE(is_stale(shipped, here));
}

TEST(TuningStore, MigratesASchemaOneFileAndKeepsItsRows) {
  testing::TempDir dir;
  const std::string path = dir.file("old.db");
  {
    // A file exactly as schema 1 wrote it.
    Database db(path);
    db.exec(R"sql(
      CREATE TABLE results (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, winner TEXT NOT NULL,
        median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL, tuned_at TEXT NOT NULL,
        tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
        driver_version INTEGER NOT NULL, arch TEXT NOT NULL,
        PRIMARY KEY (device_key, m, n, k, problem_class));
      CREATE TABLE candidates (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, variant TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT NOT NULL, median_ms REAL NOT NULL,
        min_ms REAL NOT NULL, samples INTEGER NOT NULL,
        PRIMARY KEY (device_key, m, n, k, problem_class, variant));
      CREATE TABLE cubins (arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
        template_hash TEXT NOT NULL, variant TEXT NOT NULL, image BLOB NOT NULL,
        PRIMARY KEY (arch, nvrtc_version, template_hash, variant));
      INSERT INTO results VALUES ('dev', 64, 64, 64, 'a4-dense', 'naive', 0.5, 0.001, 0.1,
        '2026-01-01T00:00:00Z', '0.0.1', 'abc', 12080, 12080, 'sm_90');
      INSERT INTO candidates VALUES ('dev', 64, 64, 64, 'a4-dense', 'naive', 'ok', '', 0.5, 0.4, 20);
      PRAGMA user_version = 1;)sql");
  }
  TuningStore store(path);
  EXPECT_EQ(store.schema_version(), TuningStore::kSchemaVersion);
  // No vendor candidate among its names: it was chosen among own kernels only.
  EXPECT_FALSE(store.find("dev", 64, 64, 64, "a4-dense").has_value());
  const auto e =
      store.find("dev", 64, 64, 64, "a4-dense", Precision::highest, CandidateSet::own_only, true);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->winner, "naive");
  EXPECT_EQ(e->source, "tuned");  // the default for rows from before provenance was recorded
  ASSERT_EQ(e->candidates.size(), 1u);
  EXPECT_EQ(e->candidates[0].stats.samples, 20);
  EXPECT_EQ(e->candidates[0].stats.spread, 0.0);
}

// A file as schema 3 wrote it (before precision modes): its rows keep their meaning, FP32
// results, as precision highest, and a high result of the same shape is a key of its own.
TEST(TuningStore, MigratesASchemaThreeFileItsRowsBecomeHighest) {
  testing::TempDir dir;
  const std::string path = dir.file("v3.db");
  {
    Database db(path);
    db.exec(R"sql(
      CREATE TABLE results (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, winner TEXT NOT NULL,
        median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL, tuned_at TEXT NOT NULL,
        tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
        driver_version INTEGER NOT NULL, arch TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'tuned',
        PRIMARY KEY (device_key, m, n, k, problem_class));
      CREATE TABLE candidates (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, variant TEXT NOT NULL,
        status TEXT NOT NULL, reason TEXT NOT NULL, median_ms REAL NOT NULL,
        min_ms REAL NOT NULL, samples INTEGER NOT NULL, spread REAL NOT NULL DEFAULT 0,
        compile_ms REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (device_key, m, n, k, problem_class, variant));
      CREATE TABLE cubins (arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
        template_hash TEXT NOT NULL, variant TEXT NOT NULL, image BLOB NOT NULL,
        PRIMARY KEY (arch, nvrtc_version, template_hash, variant));
      CREATE TABLE leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
      INSERT INTO results VALUES ('dev', 64, 64, 64, 'a4-dense', 'naive', 0.5, 0.001, 0.1,
        '2026-01-01T00:00:00Z', '0.0.1', 'abc', 12080, 12080, 'sm_90', 'imported');
      INSERT INTO candidates VALUES ('dev', 64, 64, 64, 'a4-dense', 'naive', 'ok', '', 0.5, 0.4, 20,
        0.05, 12.5);
      INSERT INTO cubins VALUES ('sm_90', 12080, 'abc', 'naive', x'7f454c46');
      PRAGMA user_version = 3;)sql");
  }
  TuningStore store(path);
  EXPECT_EQ(store.schema_version(), TuningStore::kSchemaVersion);
  const CandidateSet own = CandidateSet::own_only;  // no vendor candidate among its names
  const auto e = store.find("dev", 64, 64, 64, "a4-dense", Precision::highest, own, true);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->precision, Precision::highest);
  EXPECT_EQ(e->winner, "naive");
  EXPECT_EQ(e->source, "imported");
  ASSERT_EQ(e->candidates.size(), 1u);
  EXPECT_EQ(e->candidates[0].stats.samples, 20);
  EXPECT_EQ(e->candidates[0].stats.spread, 0.05);
  EXPECT_EQ(e->candidates[0].compile_ms, 12.5);
  EXPECT_FALSE(store.find("dev", 64, 64, 64, "a4-dense", Precision::high, own).has_value());
  EXPECT_TRUE(store.find_cubin("sm_90", 12080, "abc", "naive").has_value());

  StoredEntry high = *e;
  high.precision = Precision::high;
  high.winner = "tf32mma_bm64_bn64_bk16_wm32_wn32_st4_sp3_v4";
  high.candidates[0].variant = high.winner;
  store.put(high);
  const auto both = store.list("dev");
  ASSERT_EQ(both.size(), 2u);
  const auto found_high = store.find("dev", 64, 64, 64, "a4-dense", Precision::high, own, true);
  ASSERT_TRUE(found_high.has_value());
  testing::expect_same_entry(*found_high, high, testing::CandidateOrder::by_variant);
  // The highest entry and its candidate are untouched by the put of another precision.
  const auto still = store.find("dev", 64, 64, 64, "a4-dense", Precision::highest, own, true);
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(still->winner, "naive");
  ASSERT_EQ(still->candidates.size(), 1u);
  EXPECT_EQ(still->candidates[0].variant, "naive");
}

TEST(TuningStore, EachPrecisionOfAShapeIsItsOwnEntry) {
  TuningStore store(":memory:");
  StoredEntry medium = sample_entry();
  medium.precision = Precision::medium;
  medium.winner = "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp1_v4";
  medium.candidates[0].variant = medium.winner;
  store.put(sample_entry());
  store.put(medium);
  const auto a = store.find(medium.device_key, 512, 256, 1024, "a4-dense", true);
  const auto b = store.find(medium.device_key, 512, 256, 1024, "a4-dense", Precision::medium,
                            CandidateSet::with_vendor, true);
  ASSERT_TRUE(a && b);
  testing::expect_same_entry(*a, sample_entry(), testing::CandidateOrder::by_variant);
  testing::expect_same_entry(*b, medium, testing::CandidateOrder::by_variant);
  EXPECT_FALSE(store.find(medium.device_key, 512, 256, 1024, "a4-dense", Precision::high,
                          CandidateSet::with_vendor));
}

// A tuning of own kernels only is stored beside the result chosen with vendor candidates of the
// same shape, class and precision, and neither replaces the other or its candidates.
TEST(TuningStore, EachCandidateSetOfAShapeIsItsOwnEntry) {
  TuningStore store(":memory:");
  StoredEntry own = sample_entry();
  own.candidate_set = CandidateSet::own_only;
  own.winner = "tiled_t8_p1";
  own.candidates[1].status = CandidateStatus::ok;
  own.candidates[1].stats = {0.1, 0.09, 0.01, 30};
  store.put(sample_entry());
  store.put(own);
  const auto with_vendor = store.find(own.device_key, 512, 256, 1024, "a4-dense",
                                      Precision::highest, CandidateSet::with_vendor, true);
  const auto own_only = store.find(own.device_key, 512, 256, 1024, "a4-dense",
                                   Precision::highest, CandidateSet::own_only, true);
  ASSERT_TRUE(with_vendor && own_only);
  testing::expect_same_entry(*with_vendor, sample_entry(), testing::CandidateOrder::by_variant);
  testing::expect_same_entry(*own_only, own, testing::CandidateOrder::by_variant);
  EXPECT_EQ(store.list().size(), 2u);
}

// A file as schema 4 wrote it (before candidate sets): a row whose winner or a candidate is a
// vendor's (cuBLASLt) was tuned with vendor candidates; any other with own kernels only.
TEST(TuningStore, MigratesASchemaFourFileByTheNamesOfItsRows) {
  testing::TempDir dir;
  const std::string path = dir.file("v4.db");
  {
    Database db(path);
    db.exec(R"sql(
      CREATE TABLE results (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, precision TEXT NOT NULL DEFAULT 'highest',
        winner TEXT NOT NULL, median_ms REAL NOT NULL, tflops REAL NOT NULL, margin REAL NOT NULL,
        tuned_at TEXT NOT NULL, tilemm_version TEXT NOT NULL, template_hash TEXT NOT NULL,
        nvrtc_version INTEGER NOT NULL, driver_version INTEGER NOT NULL, arch TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT 'tuned',
        PRIMARY KEY (device_key, m, n, k, problem_class, precision));
      CREATE TABLE candidates (device_key TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,
        k INTEGER NOT NULL, problem_class TEXT NOT NULL, precision TEXT NOT NULL DEFAULT 'highest',
        variant TEXT NOT NULL, status TEXT NOT NULL, reason TEXT NOT NULL,
        median_ms REAL NOT NULL, min_ms REAL NOT NULL, samples INTEGER NOT NULL,
        spread REAL NOT NULL DEFAULT 0, compile_ms REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (device_key, m, n, k, problem_class, precision, variant));
      CREATE TABLE cubins (arch TEXT NOT NULL, nvrtc_version INTEGER NOT NULL,
        template_hash TEXT NOT NULL, variant TEXT NOT NULL, image BLOB NOT NULL,
        PRIMARY KEY (arch, nvrtc_version, template_hash, variant));
      CREATE TABLE leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires_at REAL NOT NULL);
      INSERT INTO results VALUES ('dev', 64, 64, 64, 'a4-dense', 'highest', 'naive', 0.5, 0.001,
        0.1, '2026-01-01T00:00:00Z', '0.0.1', 'abc', 12080, 12080, 'sm_90', 'tuned');
      INSERT INTO candidates VALUES ('dev', 64, 64, 64, 'a4-dense', 'highest', 'naive', 'ok', '',
        0.5, 0.4, 20, 0, 0);
      INSERT INTO results VALUES ('dev', 96, 64, 64, 'a4-dense', 'highest', 'naive', 0.5, 0.001,
        0.1, '2026-01-01T00:00:00Z', '0.0.1', 'abc', 12080, 12080, 'sm_90', 'tuned');
      INSERT INTO candidates VALUES ('dev', 96, 64, 64, 'a4-dense', 'highest', 'naive', 'ok', '',
        0.5, 0.4, 20, 0, 0);
      INSERT INTO candidates VALUES ('dev', 96, 64, 64, 'a4-dense', 'highest', 'cublaslt_x',
        'ok', '', 0.7, 0.6, 20, 0, 0);
      INSERT INTO results VALUES ('dev', 128, 64, 64, 'a4-dense', 'medium', 'cublaslt_y', 0.5,
        0.001, 0.1, '2026-01-01T00:00:00Z', '0.0.1', 'abc', 12080, 12080, 'sm_90', 'imported');
      PRAGMA user_version = 4;)sql");
  }
  TuningStore store(path);
  EXPECT_EQ(store.schema_version(), TuningStore::kSchemaVersion);
  const auto own = store.find("dev", 64, 64, 64, "a4-dense", Precision::highest,
                              CandidateSet::own_only, true);
  ASSERT_TRUE(own.has_value());
  EXPECT_EQ(own->candidates.size(), 1u);
  EXPECT_FALSE(store.find("dev", 64, 64, 64, "a4-dense").has_value());
  const auto timed_with_vendor = store.find("dev", 96, 64, 64, "a4-dense", true);
  ASSERT_TRUE(timed_with_vendor.has_value());
  EXPECT_EQ(timed_with_vendor->winner, "naive");
  EXPECT_EQ(timed_with_vendor->candidates.size(), 2u);  // its candidates moved with it
  EXPECT_FALSE(store.find("dev", 96, 64, 64, "a4-dense", Precision::highest,
                          CandidateSet::own_only).has_value());
  const auto vendor_winner = store.find("dev", 128, 64, 64, "a4-dense", Precision::medium,
                                        CandidateSet::with_vendor);
  ASSERT_TRUE(vendor_winner.has_value());
  EXPECT_EQ(vendor_winner->source, "imported");
  EXPECT_EQ(store.list().size(), 3u);
}

TEST(TuningStore, NewerSchemaIsRefusedAndLeftUntouched) {
  testing::TempDir dir;
  const std::string path = dir.file("new.db");
  {
    Database db(path);
    db.exec("CREATE TABLE future (x INTEGER); PRAGMA user_version = 99;");
  }
  EXPECT_THROW(TuningStore{path}, Error);
  Database db(path);
  Statement s(db, "PRAGMA user_version");
  ASSERT_TRUE(s.step());
  EXPECT_EQ(s.int64(0), 99);
  Statement tables(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='results'");
  ASSERT_TRUE(tables.step());
  EXPECT_EQ(tables.int64(0), 0);
}

// A value of the file that this build does not know is the cache's failure (a lookup then
// misses), not an invalid argument of the caller's.
TEST(TuningStore, ACandidateOfUnknownStatusIsACacheError) {
  testing::TempDir dir;
  const auto entry = sample_entry();
  {
    TuningStore store(dir.file("t.db"));
    store.put(entry);
    Database db(dir.file("t.db"));
    db.exec("UPDATE candidates SET status='bogus'");
  }
  TuningStore reopened(dir.file("t.db"));
  try {
    reopened.find(entry.device_key, 512, 256, 1024, "a4-dense", true);
    ADD_FAILURE() << "an unknown status was read";
  } catch (const InvalidArgument& e) {
    ADD_FAILURE() << "an invalid argument: " << e.what();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cache);
    EXPECT_NE(std::string(e.what()).find("unknown status 'bogus'"), std::string::npos) << e.what();
  }
}

TEST(TuningStore, GarbageFileIsReportedAsACacheError) {
  testing::TempDir dir;
  const std::string path = dir.file("garbage.db");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not an SQLite database, just some bytes that pretend to be one......", f);
    std::fclose(f);
  }
  try {
    TuningStore store(path);
    FAIL() << "opened a garbage file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cache);
    EXPECT_NE(std::string(e.what()).find("garbage.db"), std::string::npos) << e.what();
  }
}

TEST(TuningStore, EightProcessesWritingAtOnceLoseNoRow) {
  testing::TempDir dir;
  const std::string path = dir.file("shared.db");
  constexpr int kProcesses = 8;
  constexpr int kEntriesEach = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        TuningStore store(path);  // every child creates/migrates the same file at once
        for (int i = 0; i < kEntriesEach; ++i) store.put(sample_entry(1 + p * kEntriesEach + i));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", p, e.what());
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed";
  }
  TuningStore store(path);
  const auto all = store.list();
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kProcesses * kEntriesEach));
  for (const auto& e : all) EXPECT_EQ(e.candidates.size(), 3u);
}

TEST(TuningStore, ClearRemovesEverythingAndSaysHowMuch) {
  testing::TempDir dir;
  TuningStore store(dir.file("t.db"));
  store.put_all({sample_entry(1), sample_entry(2)});
  store.put_cubin("sm_90", 1, "h", "naive", {'x'});
  EXPECT_EQ(store.clear(), 2);
  EXPECT_TRUE(store.list().empty());
  EXPECT_FALSE(store.find_cubin("sm_90", 1, "h", "naive").has_value());
}

}  // namespace
}  // namespace tilemm::cache
