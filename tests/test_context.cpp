// tilemm::Context on the CPU: each context owns its dispatcher, opens its own cache file, passes
// its own hooks to its tunings and counts its own tunings; its BLAS-style members check their
// arguments as the free functions do. Fakes stand in for SQLite, the kernels and the GPU tuner
// (tests/dispatch_fakes.hpp), wired per context from its settings.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dispatch_fakes.hpp"
#include "rejected_argument.hpp"
#include "tilemm/context.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

using cache::StoredEntry;
using testing::rejected_argument;
using testing::FixedTuner;
using testing::MemoryStore;

// Cache files by path: the store a context opens at its path.
struct Disk {
  std::map<std::string, MemoryStore> files;
  std::vector<std::string> opened;  // the path of each store as it was first used
};

// A store that asks its context for the path on first use, as the real one does, then is the
// file at that path.
class PathStore : public dispatch::ResultStore {
 public:
  PathStore(Disk& disk, const Context& context) : disk_(disk), context_(context) {}
  std::optional<StoredEntry> find(const std::string& device_key, const Problem& p,
                                  const std::string& problem_class, cache::CandidateSet set,
                                  bool with_candidates) override {
    return file().find(device_key, p, problem_class, set, with_candidates);
  }
  std::vector<StoredEntry> list(const std::string& device_key, bool with_candidates) override {
    return file().list(device_key, with_candidates);
  }
  void put_all(const std::vector<StoredEntry>& entries) override { file().put_all(entries); }
  bool loads_stored_code() override { return true; }
  std::optional<std::vector<char>> find_cubin(const std::string&, int, const std::string&,
                                              const std::string&) override {
    return std::nullopt;
  }
  bool has_cubin(const std::string&, int, const std::string&, const std::string&) override {
    return false;
  }
  void put_cubin(const detail::CompiledVariant&, const std::string&, int) override {}
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    return file().try_acquire_lease(key, owner, ttl);
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    file().release_lease(key, owner);
  }

 private:
  MemoryStore& file() {
    if (path_.empty()) {
      path_ = context_.cache_path();
      disk_.opened.push_back(path_);
    }
    return disk_.files[path_];
  }
  Disk& disk_;
  const Context& context_;
  std::string path_;
};

// A context over the fakes; `tuner` points at its own.
struct FakeContext {
  FixedTuner* tuner = nullptr;
  std::unique_ptr<Context> context;

  FakeContext(Disk& disk, ContextSettings settings, const std::string& winner) {
    context = std::make_unique<Context>(std::move(settings), [&](const Context& self) {
      auto t = std::make_unique<FixedTuner>(winner);
      tuner = t.get();
      return testing::fake_collaborators(std::make_unique<PathStore>(disk, self), std::move(t),
                                         "host:1");
    });
  }
  AutotuneResult autotune(const Problem& p) {
    return context->dispatcher().autotune(testing::fake_device(), p, context->settings().options);
  }
};

ContextSettings at(const std::string& path) {
  ContextSettings s;
  s.cache_path = path;
  s.options.policy = TunePolicy::tune_on_miss;
  s.options.tune_budget_ms = 0;
  return s;
}

const Problem kShape = Problem::dense(512, 256, 128, 4);

TEST(Context, TwoContextsWithTheirOwnCachesTuneAndServeIndependently) {
  Disk disk;
  FakeContext a(disk, at("/caches/a.db"), "tiled_t16_p0");
  FakeContext b(disk, at("/caches/b.db"), "naive");
  EXPECT_TRUE(disk.opened.empty());  // nothing is opened before a call needs the cache

  const AutotuneResult first = a.autotune(kShape);
  EXPECT_EQ(first.source, ResultSource::tuned);
  EXPECT_EQ(first.winner, "tiled_t16_p0");
  ASSERT_EQ(disk.files["/caches/a.db"].entries.size(), 1u);
  EXPECT_TRUE(disk.files["/caches/b.db"].entries.empty());  // a's tuning went to a's file only

  // b has its own file and memo: the shape is new to it, so it tunes, with its own tuner.
  const AutotuneResult other = b.autotune(kShape);
  EXPECT_EQ(other.source, ResultSource::tuned);
  EXPECT_EQ(other.winner, "naive");
  EXPECT_EQ(b.tuner->tuned, std::vector<std::int64_t>{512});
  EXPECT_EQ(disk.files["/caches/b.db"].entries.size(), 1u);

  // Each serves its own result from now on; a tunes nothing more.
  EXPECT_EQ(a.autotune(kShape).winner, "tiled_t16_p0");
  EXPECT_EQ(b.autotune(kShape).winner, "naive");
  EXPECT_EQ(a.tuner->tuned, std::vector<std::int64_t>{512});
  EXPECT_EQ(disk.opened, (std::vector<std::string>{"/caches/a.db", "/caches/b.db"}));

  // A third context on a's file serves a's result from the cache: the file is what is shared.
  FakeContext c(disk, at("/caches/a.db"), "naive");
  const AutotuneResult served = c.autotune(kShape);
  EXPECT_EQ(served.source, ResultSource::cache);
  EXPECT_EQ(served.winner, "tiled_t16_p0");
  EXPECT_TRUE(c.tuner->tuned.empty());
}

TEST(Context, ItsHooksGoWithItsTuningsAndNoOtherContexts) {
  Disk disk;
  ContextSettings with_hooks = at("/caches/a.db");
  std::vector<std::string> announced;
  with_hooks.hooks.lease_owner = "host:1:gpu0";
  with_hooks.hooks.on_candidate = [&](const std::string& v) { announced.push_back(v); };
  FakeContext hooked(disk, with_hooks, "tiled_t16_p0");
  FakeContext plain(disk, at("/caches/b.db"), "tiled_t16_p0");

  hooked.autotune(kShape);
  plain.autotune(kShape);
  EXPECT_EQ(hooked.tuner->hook_owners, std::vector<std::string>{"host:1:gpu0"});
  EXPECT_EQ(disk.files["/caches/a.db"].lease_askers, std::vector<std::string>{"host:1:gpu0"});
  EXPECT_EQ(announced, std::vector<std::string>{"tiled_t16_p0"});
  EXPECT_EQ(plain.tuner->hook_owners, std::vector<std::string>{"(no hooks)"});
  EXPECT_EQ(disk.files["/caches/b.db"].lease_askers, std::vector<std::string>{"host:1"});
}

TEST(Context, CountsItsOwnTuningsWhileTheFreeCounterCountsEveryContexts) {
  Disk disk;
  FakeContext a(disk, at("/caches/a.db"), "tiled_t16_p0");
  FakeContext b(disk, at("/caches/b.db"), "naive");
  const std::uint64_t process_before = tunings_run();
  a.autotune(kShape);
  a.autotune(Problem::dense(256, 256, 256, 4));
  b.autotune(kShape);
  a.autotune(kShape);  // served from a's memo: no tuning
  EXPECT_EQ(a.context->tunings_run(), 2u);
  EXPECT_EQ(b.context->tunings_run(), 1u);
  EXPECT_EQ(tunings_run() - process_before, 3u);
}


// The BLAS-style members run with the context's options unless given others: a context whose
// settings hold a budget no call may run with refuses a call that passes none, before any
// device is asked for, and serves an empty problem without opening its cache.
TEST(Context, ItsBlasStyleMembersRunWithItsOwnOptions) {
  Disk disk;
  ContextSettings broken = at("/caches/a.db");
  broken.options.tune_budget_ms = -1;
  FakeContext a(disk, broken, "naive");
  float x[64] = {};
  Context& c = *a.context;
  EXPECT_EQ(rejected_argument([&] {
              c.gemm(Layout::column_major, Op::none, Op::none, 4, 4, 4, 1, x, 4, x, 4, 0, x, 4);
            }),
            "tune_budget_ms");
  EXPECT_EQ(rejected_argument([&] {
              c.gemm_strided_batched(Layout::row_major, Op::none, Op::none, 2, 3, 4, 1, x, 4, 8,
                                     x, 3, 12, 0, x, 3, 6, 2);
            }),
            "tune_budget_ms");
  Options given;
  given.tune_budget_ms = 10;
  given.precision = static_cast<Precision>(9);  // what the passed Options say is checked
  EXPECT_EQ(rejected_argument([&] {
              c.gemm(Layout::row_major, Op::none, Op::none, 4, 4, 4, 1, x, 4, x, 4, 0, x, 4,
                     nullptr, given);
            }),
            "precision");
  // The layout's own checks come first, as in the free functions.
  EXPECT_EQ(rejected_argument([&] {
              c.gemm(Layout::column_major, Op::none, Op::none, 4, 5, 3, 1, x, 4, x, 3, 0, x, 3);
            }),
            "ldc");
  EXPECT_EQ(rejected_argument([&] {
              c.gemm_strided_batched(Layout::row_major, Op::none, Op::none, 2, 3, 4, 1, x, 4, 8,
                                     x, 3, 12, 0, x, 3, 6, -1);
            }),
            "batch_count");
  given.precision = Precision::highest;
  EXPECT_EQ(rejected_argument([&] {  // M == 0: nothing to do
              c.gemm(Layout::row_major, Op::transpose, Op::none, 0, 4, 4, 1, x, 1, x, 4, 0, x, 4,
                     nullptr, given);
            }),
            "<accepted>");
  EXPECT_TRUE(disk.opened.empty());
  EXPECT_EQ(c.tunings_run(), 0u);
}

TEST(Context, AnEmptyCachePathIsTheEnvironmentsAtEachAsking) {
  setenv("TILEMM_CACHE", "/tmp/context-env/one.db", 1);
  Context from_environment;
  EXPECT_EQ(from_environment.cache_path(), "/tmp/context-env/one.db");
  setenv("TILEMM_CACHE", "/tmp/context-env/two.db", 1);
  EXPECT_EQ(from_environment.cache_path(), "/tmp/context-env/two.db");
  EXPECT_EQ(from_environment.cache_path(), cache_path_from_environment());
  Context named(at("/tmp/context-named.db"));
  EXPECT_EQ(named.cache_path(), "/tmp/context-named.db");
  unsetenv("TILEMM_CACHE");
}

// The one test of this program that touches the default context: configured before first use,
// the free cache_path() follows it; once the default exists, configuring it again is refused.
TEST(Context, TheDefaultContextIsConfiguredBeforeItsFirstUseOnly) {
  ContextSettings settings = at("/tmp/context-default.db");
  settings.options.policy = TunePolicy::off;
  settings.effort = TuneEffort::quick;
  configure_default_context(settings);
  EXPECT_EQ(cache_path(), "/tmp/context-default.db");  // asking makes nothing
  configure_default_context(at("/tmp/context-default-2.db"));  // still allowed
  Context& d = default_context();
  EXPECT_EQ(&d, &default_context());
  EXPECT_EQ(d.cache_path(), "/tmp/context-default-2.db");
  EXPECT_EQ(cache_path(), "/tmp/context-default-2.db");
  EXPECT_EQ(d.settings().options.policy, TunePolicy::tune_on_miss);
  EXPECT_THROW(configure_default_context(settings), InvalidArgument);
  EXPECT_EQ(default_context().cache_path(), "/tmp/context-default-2.db");
}

}  // namespace
}  // namespace tilemm
