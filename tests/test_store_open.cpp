// Damaged and unusable cache locations never stop the application.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "quick_check_record.hpp"
#include "store_open.hpp"
#include "temp_dir.hpp"

namespace tilemm::cache {
namespace {

namespace fs = std::filesystem;

StoredEntry tiny_entry(std::int64_t m) {
  StoredEntry e;
  e.device_key = "dev|sm_90|1sm|1MiB";
  e.M = m;
  e.N = e.K = 8;
  e.problem_class = "a4-dense";
  e.winner = "naive";
  e.median_ms = 1;
  e.tuned_at = "2026-11-29T00:00:00Z";
  e.tilemm_version = "0.1.0";
  e.versions = {"0123456789abcdef", 1, 1};
  e.arch = "sm_90";
  return e;
}

std::vector<std::string> files_starting_with(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().rfind(prefix, 0) == 0) out.push_back(f.path().filename().string());
  return out;
}

TEST(StoreOpen, GarbageFileIsMovedAsideAndReplacedWithOneWarning) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  std::ofstream(path) << std::string(5000, 'g');
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.store);
  EXPECT_TRUE(opened.persistent);
  EXPECT_NE(opened.warning.find("moved it to"), std::string::npos) << opened.warning;
  EXPECT_EQ(opened.warning.find('\n'), std::string::npos);
  opened.store->put(tiny_entry(1));  // the fresh store works
  const auto aside = files_starting_with(fs::path(path).parent_path().string(), "tuning.db.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  std::ifstream moved(dir.file(aside[0]));
  std::string content((std::istreambuf_iterator<char>(moved)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, std::string(5000, 'g'));  // the user's file is kept, not deleted
}

TEST(StoreOpen, TruncatedDatabaseIsDetectedAndReplaced) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  {
    TuningStore store(path);
    std::vector<StoredEntry> many;
    for (int i = 1; i <= 300; ++i) many.push_back(tiny_entry(i));
    store.put_all(many);
    store.put_cubin("sm_90", 1, "h", "naive", std::vector<char>(200000, 'c'));
  }
  {
    TuningStore checkpoint(path);  // fold the WAL into the main file before truncating it
  }
  fs::remove(path + "-wal");
  fs::remove(path + "-shm");
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 8192u);
  fs::resize_file(path, size / 3);
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.store);
  EXPECT_TRUE(opened.persistent);
  EXPECT_NE(opened.warning.find("damaged"), std::string::npos) << opened.warning;
  EXPECT_TRUE(opened.store->list().empty());
}

// A store of 300 entries and a 200 KB CUBIN, closed: tens of pages, its WAL folded into the file.
void write_store_of_many_pages(const std::string& path) {
  {
    TuningStore store(path);
    std::vector<StoredEntry> many;
    for (int i = 1; i <= 300; ++i) many.push_back(tiny_entry(i));
    store.put_all(many);
    store.put_cubin("sm_90", 1, "h", "naive", std::vector<char>(200000, 'c'));
  }
  { TuningStore checkpoint(path); }
}

// SQLite's quick_check reads every page: it runs when the file changed since it last passed, and
// an open of the file in the state that passed skips it.
TEST(StoreOpen, AFileIsQuickCheckedAgainOnlyAfterItChanged) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  write_store_of_many_pages(path);
  { TuningStore reopened(path); }  // in the state the last close left
  const std::string state = cache_file_state(path);
  ASSERT_FALSE(state.empty());
  EXPECT_TRUE(passed_quick_check_in(path, state));
  EXPECT_TRUE(fs::exists(quick_check_record_path(path)));
  EXPECT_EQ(fs::status(quick_check_record_path(path)).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_FALSE(passed_quick_check_in(path, ""));
  // Through a symbolic link the state is the target's, its -wal included.
  fs::create_symlink(path, dir.file("link.db"));
  EXPECT_EQ(cache_file_state(dir.file("link.db")), state);
  EXPECT_EQ(cache_file_state(dir.file("missing.db")), "");

  {  // A write by another connection changes the state: the next open checks again.
    Database other(path);
    other.exec("INSERT INTO leases (key, owner, expires_at) VALUES ('k', 'another', 0)");
  }
  const std::string written = cache_file_state(path);
  EXPECT_NE(written, state);
  EXPECT_FALSE(passed_quick_check_in(path, written));
  { TuningStore reopened(path); }
  EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));

  // A copy put in its place (same bytes, another file) is checked again.
  fs::copy_file(path, dir.file("copy.db"));
  fs::rename(dir.file("copy.db"), path);
  EXPECT_FALSE(passed_quick_check_in(path, cache_file_state(path)));

  // No record: checked.
  { TuningStore reopened(path); }
  fs::remove(quick_check_record_path(path));
  EXPECT_FALSE(passed_quick_check_in(path, cache_file_state(path)));
}

// The store's own writes move the record along: a cache that tilemm keeps writing (every tuning
// stores its result, a CUBIN, a lease) is not read whole again by each new process.
TEST(StoreOpen, TheStoresOwnWritesKeepTheFileChecked) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  { TuningStore created(path); }
  const std::string created = cache_file_state(path);
  EXPECT_TRUE(passed_quick_check_in(path, created));
  {
    TuningStore store(path);
    store.put(tiny_entry(1));
    const std::string after_put = cache_file_state(path);
    EXPECT_NE(after_put, created);
    EXPECT_TRUE(passed_quick_check_in(path, after_put));
    store.put_cubin("sm_90", 1, "h", "naive", std::vector<char>(100000, 'c'));
    EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
    ASSERT_TRUE(store.try_acquire_lease("key", "me", 60));
    EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
    store.release_lease("key", "me");
    EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
    {
      TuningStore::Writer writer(store);
      writer.put(tiny_entry(2));
      writer.put(tiny_entry(3));
      writer.commit();
    }
    EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
  }
  // The close folded the -wal into the file: followed too.
  const std::string closed = cache_file_state(path);
  EXPECT_EQ(closed.find(", wal"), std::string::npos) << closed;
  EXPECT_TRUE(passed_quick_check_in(path, closed));
  {
    TuningStore store(path);
    EXPECT_EQ(store.clear(), 3);
    EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
  }
  EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
}

// A write of the store's own that begins from a state nobody checked (here another connection
// wrote after the store's open) leaves the record where it was: the next open checks.
TEST(StoreOpen, AWriteFromAnUncheckedStateIsNotRecordedAsChecked) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  { TuningStore created(path); }
  {
    TuningStore store(path);
    ASSERT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
    {
      Database other(path);
      other.exec("INSERT INTO leases (key, owner, expires_at) VALUES ('k', 'another', 0)");
    }
    const std::string changed = cache_file_state(path);
    EXPECT_FALSE(passed_quick_check_in(path, changed));
    store.put(tiny_entry(1));
    EXPECT_NE(cache_file_state(path), changed);
    EXPECT_FALSE(passed_quick_check_in(path, cache_file_state(path)));
  }
  EXPECT_FALSE(passed_quick_check_in(path, cache_file_state(path)));
  { TuningStore reopened(path); }  // checks, and records the pass
  EXPECT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
}

// Pages overwritten in place after a pass (the size kept) are found at the next open: the write
// changed the file's state, so the check runs.
TEST(StoreOpen, PagesOverwrittenAfterAPassAreDetectedAndReplaced) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  write_store_of_many_pages(path);
  { TuningStore passed(path); }
  ASSERT_TRUE(passed_quick_check_in(path, cache_file_state(path)));
  fs::remove(path + "-wal");
  fs::remove(path + "-shm");
  const auto size = fs::file_size(path);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    const std::string garbage(4096, '\xab');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  ASSERT_EQ(fs::file_size(path), size);
  const OpenedStore opened = open_store(path);
  ASSERT_TRUE(opened.store);
  EXPECT_NE(opened.warning.find("damaged"), std::string::npos) << opened.warning;
  EXPECT_TRUE(opened.store->list().empty());
}

TEST(StoreOpen, UnwritableLocationGivesAnInMemoryStoreAndAWarning) {
  // A path below a regular file cannot be created by anyone, root included.
  testing::TempDir dir;
  std::ofstream(dir.file("not-a-folder")) << "x";
  const OpenedStore opened = open_store(dir.file("not-a-folder/tuning.db"));
  ASSERT_TRUE(opened.store);
  EXPECT_FALSE(opened.persistent);
  EXPECT_NE(opened.warning.find("in memory"), std::string::npos) << opened.warning;
  opened.store->put(tiny_entry(3));
  EXPECT_EQ(opened.store->list().size(), 1u);
}

// A schema version no tilemm writes, or the current one without its tables, would fail every
// query of the process without SQLite calling the file corrupt: it is moved aside like one.
TEST(StoreOpen, ASchemaVersionWithoutItsTablesIsMovedAsideAndReplaced) {
  for (const char* pragma : {"PRAGMA user_version = -7;", "PRAGMA user_version = 5;"}) {
    SCOPED_TRACE(pragma);
    testing::TempDir dir;
    const std::string path = dir.file("tuning.db");
    {
      Database db(path);
      db.exec(std::string("CREATE TABLE unrelated (x INTEGER); ") + pragma);
    }
    const OpenedStore opened = open_store(path);
    ASSERT_TRUE(opened.store);
    EXPECT_TRUE(opened.persistent);
    EXPECT_NE(opened.warning.find("moved it to"), std::string::npos) << opened.warning;
    opened.store->put(tiny_entry(1));  // the fresh store works
    EXPECT_EQ(opened.store->list().size(), 1u);
    EXPECT_EQ(files_starting_with(dir.file(""), "tuning.db.corrupt-").size(), 1u);
  }
}

TEST(StoreOpen, NewerSchemaGivesMemoryAndLeavesTheFileAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  {
    Database db(path);
    db.exec("PRAGMA user_version = 42;");
  }
  const auto before = fs::file_size(path);
  const OpenedStore opened = open_store(path);
  EXPECT_FALSE(opened.persistent);
  EXPECT_NE(opened.warning.find("newer"), std::string::npos) << opened.warning;
  EXPECT_EQ(fs::file_size(path), before);
  EXPECT_TRUE(files_starting_with(dir.file(""), "tuning.db.corrupt-").empty());
}

TEST(Leases, OneOwnerAtATimeUntilReleaseOrExpiry) {
  testing::TempDir dir;
  TuningStore a(dir.file("t.db"));
  TuningStore b(dir.file("t.db"));
  EXPECT_TRUE(a.try_acquire_lease("k", "proc-a", 60));
  EXPECT_FALSE(b.try_acquire_lease("k", "proc-b", 60));
  EXPECT_TRUE(a.try_acquire_lease("k", "proc-a", 60));  // re-entrant for its owner
  EXPECT_TRUE(b.try_acquire_lease("other", "proc-b", 60));
  a.release_lease("k", "proc-a");
  EXPECT_TRUE(b.try_acquire_lease("k", "proc-b", 0.2));
  EXPECT_FALSE(a.try_acquire_lease("k", "proc-a", 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // proc-b "died"
  EXPECT_TRUE(a.try_acquire_lease("k", "proc-a", 60));
}

TEST(Leases, SixteenProcessesRaceForOneKeyAndExactlyOneWins) {
  testing::TempDir dir;
  const std::string path = dir.file("t.db");
  { TuningStore init(path); }
  std::vector<pid_t> children;
  for (int p = 0; p < 16; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 3;
      try {
        TuningStore store(path);
        code = store.try_acquire_lease("shape", "proc-" + std::to_string(p), 60) ? 0 : 1;
      } catch (...) {
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  int winners = 0, losers = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    winners += WEXITSTATUS(status) == 0;
    losers += WEXITSTATUS(status) == 1;
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(losers, 15);
}

}  // namespace
}  // namespace tilemm::cache
