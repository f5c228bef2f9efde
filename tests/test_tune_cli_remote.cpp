// tilemm-tune against the fleet's store without a GPU: --import, --list, --export and --clear
// with --remote on a private redis-server, --shapes-file, the usage errors of --remote, and the
// store handed to a tuning worker process.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "isolated_tuning.hpp"
#include "redis_connection.hpp"
#include "redis_server.hpp"
#include "remote_commands.hpp"
#include "row_split.hpp"
#include "sample_entry.hpp"
#include "temp_dir.hpp"
#include "tune_cli.hpp"
#include "tune_cli_run.hpp"
#include "tuning_json.hpp"

namespace tilemm::cli {
namespace {

using testing::run_tune;
using testing::TuneCliRun;

cache::StoredEntry sample(std::int64_t m) { return testing::sample_entry(m, m, m); }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// A stand-in for "tilemm-tune --worker": writes the store its environment names and its command
// line into `dir`, then reports the shape done, as a worker whose result is in the cache does.
std::string fake_worker(const testing::TempDir& dir) {
  const std::string path = dir.file("worker.sh");
  write(path, "#!/bin/sh\n"
              "printf '%s' \"${TILEMM_REMOTE_CACHE-unset}\" > '" + dir.file("remote") + "'\n"
              "printf '%s' \"$*\" > '" + dir.file("args") + "'\n"
              "echo done\n");
  chmod(path.c_str(), 0700);
  return path;
}

TEST(TuneCliRemote, ImportListExportAndClearActOnTheFleetsStore) {
  if (const std::string why = testing::why_no_redis_server(); !why.empty()) GTEST_SKIP() << why;
  testing::RedisServer server;
  testing::TempDir dir;
  write(dir.file("in.json"), cache::entries_to_json({sample(64), sample(96), sample(128)}));
  const TuneCliRun imported = run_tune({"--import", dir.file("in.json"), "--remote", server.url()});
  ASSERT_EQ(imported.code, 0) << imported.err;
  EXPECT_NE(imported.out.find("imported 3 entries"), std::string::npos) << imported.out;
  const TuneCliRun listed = run_tune({"--list", "--remote", server.url()});
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("96x96x96"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("3 entries"), std::string::npos) << listed.out;
  // A bad value in the store is left out of the listing with a warning, not fatal.
  cache::RedisConnection(cache::parse_redis_url(server.url()), std::chrono::milliseconds(500))
      .command({"SET", "tilemm:result:x", "{oops"});
  const TuneCliRun exported = run_tune({"--export", dir.file("out.json"), "--remote", server.url()});
  ASSERT_EQ(exported.code, 0) << exported.err;
  EXPECT_NE(exported.err.find("tilemm:result:x"), std::string::npos) << exported.err;
  std::ifstream f(dir.file("out.json"));
  std::stringstream text;
  text << f.rdbuf();
  const auto back = cache::entries_from_json(text.str(), detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 3u);
  for (const auto& e : back) EXPECT_EQ(e.source, "imported");
  const TuneCliRun cleared = run_tune({"--clear", "--remote", server.url()});
  EXPECT_EQ(cleared.code, 0);
  EXPECT_NE(cleared.out.find("removed 4 entries"), std::string::npos) << cleared.out;
}

TEST(TuneCliRemote, ABadFileChangesNothingInTheStore) {
  if (const std::string why = testing::why_no_redis_server(); !why.empty()) GTEST_SKIP() << why;
  testing::RedisServer server;
  testing::TempDir dir;
  std::string text = cache::entries_to_json({sample(64), sample(96)});
  text.replace(text.find("tiled_t32_p0"), 12, "not_a_kernel");
  write(dir.file("bad.json"), text);
  EXPECT_EQ(run_tune({"--import", dir.file("bad.json"), "--remote", server.url()}).code, 1);
  EXPECT_NE(run_tune({"--list", "--remote", server.url()}).out.find("0 entries"), std::string::npos);
}

// The store's --import and --export word a bad file as the local cache's do: the file the user
// gave, and why in plain words. An import file is checked before the store is asked.
TEST(TuneCliRemote, ImportAndExportErrorsNameTheFileAndWhy) {
  testing::TempDir dir;
  write(dir.file("bad.json"), "{oops");
  std::filesystem::create_directory(dir.file("folder"));
  const auto error_of = [](std::vector<std::string> args) {
    const TuneCliRun r = run_tune(std::move(args));
    EXPECT_EQ(r.code, 1) << r.err;
    return r.err;
  };
  const std::string unreachable = "redis://127.0.0.1:1";
  EXPECT_EQ(error_of({"--import", dir.file("bad.json"), "--remote", unreachable}),
            "tilemm-tune: error: cannot import '" + dir.file("bad.json") +
                "': not valid JSON at line 1, column 2: invalid literal (nothing was changed)\n");
  EXPECT_EQ(error_of({"--import", dir.file("folder"), "--remote", unreachable}),
            "tilemm-tune: error: cannot import '" + dir.file("folder") + "': is a directory\n");
  if (const std::string why = testing::why_no_redis_server(); !why.empty()) GTEST_SKIP() << why;
  testing::RedisServer server;
  const std::string missing = dir.file("nowhere/out.json");
  EXPECT_EQ(error_of({"--export", missing, "--remote", server.url()}),
            "tilemm-tune: error: cannot write '" + missing + "': No such file or directory\n");
}

TEST(TuneCliRemote, AnUnreachableStoreIsAnErrorOfTheToolAndABadUrlAUsageError) {
  const TuneCliRun down = run_tune({"--list", "--remote", "redis://127.0.0.1:1"});
  EXPECT_EQ(down.code, 1);
  EXPECT_NE(down.err.find("127.0.0.1:1"), std::string::npos) << down.err;
  const TuneCliRun bad = run_tune({"--list", "--remote", "redis://:secret@nowhere"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.find("secret"), std::string::npos) << bad.err;
  EXPECT_EQ(run_tune({"--precompile", "--remote", "redis://127.0.0.1:1"}).code, 2);
}

TEST(TuneCliRemote, AShapesFileNamesOneShapePerLineAndItsBadLine) {
  testing::TempDir dir;
  write(dir.file("shapes.txt"), "# fleet\n64x32x16\n\n  128x64x8  \n");
  const auto shapes = read_shapes_file(dir.file("shapes.txt"));
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[1], (Shape{128, 64, 8}));
  write(dir.file("bad.txt"), "64x32x16\n64x0x16\n");
  try {
    read_shapes_file(dir.file("bad.txt"));
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "--shapes-file");
    EXPECT_NE(std::string(e.what()).find("bad.txt:2"), std::string::npos) << e.what();
  }
}

TEST(TuneCliRemote, AWorkerGetsTheStoreInItsOwnEnvironmentNotOnItsCommandLine) {
  testing::TempDir dir;
  const std::string worker = fake_worker(dir);
  const char* parent_before = std::getenv("TILEMM_REMOTE_CACHE");
  SearchChoice search;
  search.remote_cache = "redis://tuner:secret@fleet.example:6390/2";
  const IsolatedOutcome outcome = tune_in_worker(worker, 0, {64, 32, 16}, search, 30, nullptr);
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(read(dir.file("remote")), search.remote_cache);
  const std::string args = read(dir.file("args"));
  EXPECT_NE(args.find("--shapes 64x32x16"), std::string::npos) << args;
  EXPECT_EQ(args.find("secret"), std::string::npos) << "the password is on the command line: " << args;
  // The parent's own environment is not how the URL travels.
  EXPECT_EQ(std::getenv("TILEMM_REMOTE_CACHE"), parent_before);

  search.remote_cache.clear();  // no store: none in the worker's environment either
  ASSERT_TRUE(tune_in_worker(worker, 0, {64, 32, 16}, search, 30, nullptr).ok);
  EXPECT_EQ(read(dir.file("remote")), "unset");
}

}  // namespace
}  // namespace tilemm::cli
