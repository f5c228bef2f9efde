// The background worker's own connection to the SQLite cache (ResultStore::another_connection,
// GuardedStore::WorkerScope): it reaches the callers' file, and there is none where the cache
// fell back to memory, whose data no second connection could reach.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "gpu_bench.hpp"
#include "provenance.hpp"
#include "real_collaborators.hpp"
#include "sample_entry.hpp"
#include "temp_dir.hpp"

namespace tilemm::dispatch {
namespace {

std::optional<cache::StoredEntry> find_in(ResultStore& store, const cache::StoredEntry& e) {
  return store.find(e.device_key, problem_of(e), e.problem_class, e.candidate_set, false);
}

TEST(WorkerConnection, ReachesTheCallersFileBothWays) {
  testing::TempDir dir;
  const std::string path = dir.file("tuning.db");
  Collaborators parts = real_collaborators([&] { return path; }, tuner::standard_timing_plan());
  const auto theirs = testing::sample_entry(96, 64, 64, "tiled_t16_p0");
  parts.store->put_all({theirs});
  const auto worker = parts.store->another_connection();
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(find_in(*worker, theirs).has_value());
  const auto mine = testing::sample_entry(128, 64, 64, "tiled_t32_p0");
  worker->put_all({mine});
  const auto seen = find_in(*parts.store, mine);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->winner, "tiled_t32_p0");
}

TEST(WorkerConnection, NoneWhereTheCacheIsInMemory) {
  testing::TempDir dir;
  std::ofstream(dir.file("not-a-folder")) << "x";  // a path below a file cannot be created
  const std::string path = dir.file("not-a-folder/tuning.db");
  Collaborators parts = real_collaborators([&] { return path; }, tuner::standard_timing_plan());
  parts.store->put_all({testing::sample_entry(96, 64, 64, "tiled_t16_p0")});
  EXPECT_EQ(parts.store->another_connection(), nullptr);
}

}  // namespace
}  // namespace tilemm::dispatch
