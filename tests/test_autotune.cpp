// Autotuning and dispatch end to end on the GPU, each test process with its own fresh cache.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "background_compiles.hpp"
#include "candidate_provider.hpp"
#include "cublaslt_library.hpp"
#include "gemm_check.hpp"
#include "kernel_sources.hpp"
#include "process_dispatcher.hpp"
#include "provenance.hpp"
#include "nvrtc_compiler.hpp"
#include "temp_dir.hpp"
#include "tilemm/tilemm.hpp"
#include "tuning_store.hpp"

namespace tilemm {
namespace {

testing::TempDir* cache_dir = nullptr;

GemmArgs no_op = {};

// Reads a child process started with popen() to its end and closes it.
struct ChildOutcome {
  std::string output;
  bool exited_zero = false;
};
ChildOutcome finish_child(std::FILE* pipe) {
  ChildOutcome r;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) r.output += line;
  const int status = pclose(pipe);
  r.exited_zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

TEST(Autotune, TunesSeveralShapesAndTheirWinnersAreCorrect) {
  TILEMM_REQUIRE_DEVICE();
  // Small shapes, none of them preloaded: tuning launches every candidate about 7 times, and
  // compute-sanitizer's racecheck slows each launch by orders of magnitude, so a shape of 10^8
  // FMAs alone would outlast a device call. 264x200x180 still holds
  // a full 256x128 tile (the unchecked-load path) and 11+ K tiles.
  for (auto [m, n, k] : {std::array<std::int64_t, 3>{96, 80, 72}, {257, 255, 129}, {264, 200, 180}}) {
    const AutotuneResult r = autotune(m, n, k);
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    EXPECT_EQ(r.source, ResultSource::tuned);
    EXPECT_EQ(r.device_key, current_device().model_key());
    EXPECT_EQ(r.problem_class, problem_class(Problem::dense(m, n, k)));
    EXPECT_EQ(r.problem_class, m == 257 ? "a1-dense" : "a4-dense");
    EXPECT_GT(r.median_ms, 0.0);
    EXPECT_GT(r.tflops, 0.0);
    EXPECT_GE(r.margin, 0.0);
    EXPECT_GT(r.tuning_seconds, 0.0);
    ASSERT_FALSE(r.candidates.empty());
    EXPECT_EQ(r.candidates.front().variant, r.winner);
    EXPECT_EQ(r.candidates.front().status, CandidateStatus::ok);
    // Every variant, and the vendor's algorithms where cuBLASLt loads (candidate_provider.hpp).
    const auto from_providers = std::count_if(r.candidates.begin(), r.candidates.end(), [](const auto& c) {
      return detail::provider_of(c.variant) != nullptr;
    });
    EXPECT_EQ(r.candidates.size() - static_cast<std::size_t>(from_providers),
              variant_space(Precision::highest).size());
    EXPECT_EQ(from_providers > 0, detail::cublaslt() != nullptr);
    for (const auto& c : r.candidates) {
      if (c.status == CandidateStatus::ok) {
        EXPECT_GE(c.stats.median_ms, r.median_ms) << c.variant;
      }
    }

    const auto check = testing::check_gemm(m, n, k, 0.5f, 2.0f, [](const GemmArgs& a) { gemm(a); });
    EXPECT_EQ(check.wrong, 0) << check.first;

    const AutotuneResult again = autotune(m, n, k);
    EXPECT_EQ(again.source, ResultSource::cache);
    EXPECT_EQ(again.winner, r.winner);
    EXPECT_EQ(again.candidates.size(), r.candidates.size());
  }
}

TEST(Autotune, SecondProcessDispatchesFromTheCacheWithoutCompiling) {
  TILEMM_REQUIRE_DEVICE();
  // Shapes outside the preloaded set, so that the parent really tunes them; small for the reason
  // given in the test above.
  const char* shapes = "200x300x100 300x200x236";
  autotune(200, 300, 100);
  autotune(300, 200, 236);
  const std::string command = std::string(TILEMM_DISPATCH_CHILD) + " " + shapes + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  const auto [output, exited_zero] = finish_child(pipe);
  EXPECT_TRUE(exited_zero) << output;
  EXPECT_NE(output.find("compilations=0 tunings=0"), std::string::npos) << output;
  EXPECT_NE(output.find("shape 300x200x236 wrong=0"), std::string::npos) << output;
}

TEST(Autotune, ForceRetunesAndCacheServesOtherwise) {
  TILEMM_REQUIRE_DEVICE();
  autotune(128, 64, 96);
  const auto before = tunings_run();
  EXPECT_EQ(autotune(128, 64, 96).source, ResultSource::cache);
  EXPECT_EQ(tunings_run(), before);
  Options force;
  force.force = true;
  EXPECT_EQ(autotune(128, 64, 96, force).source, ResultSource::tuned);
  EXPECT_EQ(tunings_run(), before + 1);
}

TEST(Autotune, APreloadedResultServesAShapeTheUserCacheLacks) {
  TILEMM_REQUIRE_DEVICE();
  if (current_device().name != "NVIDIA H200") GTEST_SKIP() << "the shipped preloaded cache is for the H200";
  const auto before = tunings_run();
  const AutotuneResult r = autotune(1024, 1024, 1024);  // in cache/preloaded/, not in this cache
  EXPECT_EQ(r.source, ResultSource::preloaded);
  EXPECT_EQ(tunings_run(), before);
  EXPECT_FALSE(r.candidates.empty());
  const auto check = testing::check_gemm(1024, 1024, 1024, 1.0f, 0.0f, [](const GemmArgs& a) { gemm(a); });
  EXPECT_EQ(check.wrong, 0) << check.first;
  EXPECT_EQ(tunings_run(), before);
}

TEST(Dispatch, TwoThreadsMissingTheSameShapeTuneItOnce) {
  TILEMM_REQUIRE_DEVICE();
  const auto before = tunings_run();
  std::array<testing::GemmCheck, 2> checks;
  std::array<std::string, 2> errors;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      try {
        checks[t] = testing::check_gemm(333, 222, 111, 1.0f, 0.0f, [](const GemmArgs& a) { gemm(a); });
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(tunings_run(), before + 1);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[t], "");
    EXPECT_EQ(checks[t].wrong, 0) << checks[t].first;
  }
}

// The cross-process lease end to end: two processes start at once with one empty cache and both
// miss the same shape. Exactly one tunes it; the other waits for that result (or, past its
// bound, falls back) instead of tuning it again, and both compute the right answer.
TEST(Dispatch, TwoProcessesMissingTheSameShapeTuneItOnce) {
  TILEMM_REQUIRE_DEVICE();
  const std::string command =
      "TILEMM_LOG=info " + std::string(TILEMM_DISPATCH_CHILD) + " --may-tune 345x234x456 2>&1";
  std::FILE* pipes[2] = {popen(command.c_str(), "r"), popen(command.c_str(), "r")};
  ASSERT_NE(pipes[0], nullptr);
  ASSERT_NE(pipes[1], nullptr);
  int tunings = 0;
  std::string outputs;
  for (std::FILE* pipe : pipes) {
    const auto [output, exited_zero] = finish_child(pipe);
    EXPECT_TRUE(exited_zero) << output;
    EXPECT_NE(output.find("shape 345x234x456 wrong=0"), std::string::npos) << output;
    const auto at = output.find("tunings=");
    ASSERT_NE(at, std::string::npos) << output;
    tunings += std::atoi(output.c_str() + at + 8);
    outputs += output;
  }
  EXPECT_EQ(tunings, 1) << "processes that tuned 345x234x456:\n" << outputs;
}

// dispatch_child with a cache of its own at `cache`; `args` as dispatch_child takes them; `env`
// more VAR=value settings for it.
ChildOutcome dispatch_in_child(const std::string& cache, const std::string& args,
                               const std::string& env = "") {
  const std::string command = env + " TILEMM_CACHE='" + cache + "' " +
                              std::string(TILEMM_DISPATCH_CHILD) + " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"popen failed", false};
  return finish_child(pipe);
}

// The number dispatch_child printed after "<counter>=", or -1.
long long child_count(const std::string& output, const std::string& counter) {
  const auto at = output.find(counter + "=");
  return at == std::string::npos ? -1 : std::atoll(output.c_str() + at + counter.size() + 1);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The CUBIN tests below tune with own kernels only: only they have CUBINs, and on these tiny
// shapes a vendor candidate, which has none, can win by a noise margin.
const std::string kOwnKernels = "TILEMM_VENDOR=off";

// A cache that others can write may hold anyone's code: its results still serve, but the winner's
// CUBIN is compiled in the process instead of loaded from it, and the process says why, once.
TEST(Dispatch, ACacheOthersCanWriteServesItsResultsButCompilesTheKernel) {
  TILEMM_REQUIRE_DEVICE();
  testing::TempDir dir;  // mkdtemp: 0700, this user's
  const std::string db = dir.file("tuning.db");
  const std::string folder = std::filesystem::path(db).parent_path().string();
  const std::string shape = "136x152x88";  // not preloaded, no row-split plan
  const auto filled = dispatch_in_child(db, "--may-tune " + shape, kOwnKernels);
  ASSERT_TRUE(filled.exited_zero) << filled.output;
  // As tilemm created it, the cache is private: dispatch_child exits 0 only if nothing compiled.
  const auto private_cache = dispatch_in_child(db, shape, kOwnKernels);
  ASSERT_TRUE(private_cache.exited_zero) << private_cache.output;

  struct Sharing {
    std::string path;
    mode_t shared, private_mode;
    const char* reason;
  };
  for (const Sharing& s : {Sharing{db, 0664, 0600, "tuning.db' is writable by its group"},
                           Sharing{folder, 0777, 0700, "' is writable by its group and by others"}}) {
    SCOPED_TRACE(s.path);
    ASSERT_EQ(chmod(s.path.c_str(), s.shared), 0);
    const auto shared = dispatch_in_child(db, "--may-tune " + shape, kOwnKernels);
    ASSERT_EQ(chmod(s.path.c_str(), s.private_mode), 0);
    EXPECT_TRUE(shared.exited_zero) << shared.output;
    EXPECT_NE(shared.output.find("shape " + shape + " wrong=0"), std::string::npos) << shared.output;
    EXPECT_EQ(child_count(shared.output, "tunings"), 0) << shared.output;  // the result served
    EXPECT_GE(child_count(shared.output, "compilations"), 1) << shared.output;  // the code did not
    EXPECT_EQ(occurrences(shared.output, "is shared ("), 1u) << shared.output;
    EXPECT_NE(shared.output.find(s.reason), std::string::npos) << shared.output;
  }
  // Private again: the CUBIN stored while it was private serves again.
  const auto private_again = dispatch_in_child(db, shape, kOwnKernels);
  EXPECT_TRUE(private_again.exited_zero) << private_again.output;
}

// A stored CUBIN that is damaged (garbage bytes) or holds another kernel (a valid CUBIN without
// this variant's symbol) is not run: the call recompiles, warns, computes the right answer, and
// the recompiled CUBIN replaces the bad one for the next process.
TEST(Dispatch, ADamagedOrSwappedCachedCubinIsRecompiledAndReplaced) {
  TILEMM_REQUIRE_DEVICE();
  testing::TempDir dir;
  const std::string db = dir.file("tuning.db");
  const std::string shape = "120x136x104";  // not preloaded, no row-split plan
  const auto filled = dispatch_in_child(db, "--may-tune " + shape, kOwnKernels);
  ASSERT_TRUE(filled.exited_zero) << filled.output;
  const std::string arch = current_device().arch();

  enum class Damage { garbage, another_kernel };
  for (const Damage damage : {Damage::garbage, Damage::another_kernel}) {
    SCOPED_TRACE(damage == Damage::garbage ? "garbage bytes" : "another variant's CUBIN");
    {
      cache::Database file(db);
      std::vector<std::string> variants;
      cache::Statement rows(file, "SELECT variant FROM cubins");
      while (rows.step()) variants.push_back(rows.text(0));
      ASSERT_FALSE(variants.empty());
      for (const auto& variant : variants) {
        std::vector<char> image(4096, '\x5a');
        if (damage == Damage::another_kernel) {
          const Variant donor = variant == "naive" ? default_variant() : parse_variant("naive");
          image = detail::compile_variant(donor, arch).cubin;
        }
        cache::Statement put(file, "UPDATE cubins SET image=?1 WHERE variant=?2");
        put.bind_blob(1, image).bind(2, variant).run();
      }
    }
    const auto repaired = dispatch_in_child(db, "--may-tune " + shape, kOwnKernels);
    EXPECT_TRUE(repaired.exited_zero) << repaired.output;
    EXPECT_NE(repaired.output.find("shape " + shape + " wrong=0"), std::string::npos) << repaired.output;
    EXPECT_EQ(child_count(repaired.output, "tunings"), 0) << repaired.output;
    EXPECT_GE(child_count(repaired.output, "compilations"), 1) << repaired.output;
    EXPECT_NE(repaired.output.find("unusable, recompiling"), std::string::npos) << repaired.output;
    // The rejected image leaves no error for the application's next cudaGetLastError().
    EXPECT_NE(repaired.output.find("last_error=cudaSuccess"), std::string::npos) << repaired.output;
    const auto next = dispatch_in_child(db, shape, kOwnKernels);  // exits 0 only if nothing compiled
    EXPECT_TRUE(next.exited_zero) << next.output;
  }
}

TEST(Dispatch, PolicyOffNeverTunesAndStaysCorrect) {
  TILEMM_REQUIRE_DEVICE();
  const auto before = tunings_run();
  Options off;
  off.policy = TunePolicy::off;
  const auto check = testing::check_gemm(77, 99, 555, -1.0f, 0.25f, [&](const GemmArgs& a) { gemm(a, nullptr, off); });
  EXPECT_EQ(check.wrong, 0) << check.first;
  EXPECT_EQ(tunings_run(), before);
}

TEST(Autotune, WithTuningOffReportsTheFallbackWithoutTuning) {
  TILEMM_REQUIRE_DEVICE();
  Options off;
  off.policy = TunePolicy::off;
  const auto before = tunings_run();
  const AutotuneResult r = autotune(91, 93, 95, off);
  EXPECT_EQ(r.source, ResultSource::fallback);
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_NO_THROW(parse_variant(r.winner));
  EXPECT_EQ(tunings_run(), before);
  // The fallback is not remembered as this shape's answer: gemm() with tuning on tunes it.
  Options on;
  on.policy = TunePolicy::tune_on_miss;
  const auto check =
      testing::check_gemm(91, 93, 95, 1.0f, 0.0f, [&](const GemmArgs& a) { gemm(a, nullptr, on); });
  EXPECT_EQ(check.wrong, 0) << check.first;
  EXPECT_EQ(tunings_run(), before + 1);
}

// With tuning off and nothing in the user's cache, the shipped results still count as tuned
// shapes: 4000^3 runs the preloaded 4096^3 winner, not the default variant.
TEST(Autotune, WithTuningOffTheNearestPreloadedShapeServes) {
  TILEMM_REQUIRE_DEVICE();
  if (current_device().name != "NVIDIA H200") GTEST_SKIP() << "the shipped preloaded cache is for the H200";
  Options off;
  off.policy = TunePolicy::off;
  const auto before = tunings_run();
  const AutotuneResult r = autotune(4000, 4000, 4000, off);
  EXPECT_EQ(r.source, ResultSource::fallback);
  const AutotuneResult nearest = autotune(4096, 4096, 4096, off);
  EXPECT_EQ(nearest.source, ResultSource::preloaded);
  EXPECT_EQ(r.winner, nearest.winner);
  EXPECT_NE(r.winner, variant_name(default_variant()));
  EXPECT_EQ(tunings_run(), before);
}

TEST(Dispatch, WarmCallsCompileNothing) {
  TILEMM_REQUIRE_DEVICE();
  testing::check_gemm(64, 64, 64, 1.0f, 0.0f, [](const GemmArgs& a) { gemm(a); });
  // A first call's tuning may leave compilations running on the pool, past its deadline.
  detail::wait_for_background_compiles();
  const auto compiled = nvrtc_compilations();
  const auto tuned = tunings_run();
  const auto check = testing::check_gemm(64, 64, 64, 1.0f, 0.0f, [](const GemmArgs& a) {
    for (int i = 0; i < 5; ++i) gemm(a);
  });
  EXPECT_EQ(check.wrong, 0);
  EXPECT_EQ(nvrtc_compilations(), compiled);
  EXPECT_EQ(tunings_run(), tuned);
}

// A cached row-split plan: gemm() runs rows [0, 1024) and [1024, 1100) with the winners cached
// for those shapes. If the plan or a part were not served from the cache, gemm() would tune.
TEST(Dispatch, ARowSplitPlanRunsEachPartWithItsOwnCachedWinner) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  {
    cache::TuningStore store(cache_path());
    const auto put = [&](std::int64_t m, const std::string& winner) {
      cache::StoredEntry e;
      e.device_key = device.model_key();
      e.M = m;
      e.N = 260;
      e.K = 300;
      e.problem_class = problem_class(Problem::dense(m, 260, 300));
      e.winner = winner;
      e.median_ms = 0.01;
      e.tuned_at = "2026-11-29T00:00:00Z";
      e.tilemm_version = "test";
      e.versions = dispatch::running_versions(device, Problem::dense(m, 260, 300));
      e.arch = device.arch();
      e.source = "imported";
      store.put(e);
    };
    put(1100, "rowsplit_h1024");
    put(1024, "warptile_bm128_bn64_bk16_wm64_wn32_tm8_tn4_v4_mb1");
    put(76, "splitk_bm64_bn64_bk16_wm32_wn32_tm4_tn4_v4_s4");
  }
  const auto before = tunings_run();
  const auto check = testing::check_gemm(1100, 260, 300, 0.75f, -0.5f, [](const GemmArgs& a) { gemm(a); });
  EXPECT_EQ(check.wrong, 0) << check.first;
  EXPECT_EQ(tunings_run(), before);
  const AutotuneResult r = autotune(1100, 260, 300);
  EXPECT_EQ(r.winner, "rowsplit_h1024");
  EXPECT_EQ(r.source, ResultSource::imported);
  EXPECT_EQ(tunings_run(), before);
}

// Tuning a problem whose last row of tiles is partial also times the row-split plan: its parts
// are tuned and cached as shapes of their own, and the plan is verified and timed as one more
// candidate. Tiny N and K: this tunes three shapes.
TEST(Autotune, APartialRowOfTilesAddsARowSplitCandidate) {
  TILEMM_REQUIRE_DEVICE();
  const auto before = tunings_run();
  // The exhaustive search: a budgeted one tries plans only where the winner's last wave leaves
  // SMs idle (test_budgeted_search covers that rule).
  Options exhaustive;
  exhaustive.tune_budget_ms = 0;
  const AutotuneResult r = autotune(1030, 36, 20, exhaustive);
  EXPECT_EQ(tunings_run(), before + 3);  // 1030 rows, then 1024 and 6
  const auto from_providers = std::count_if(r.candidates.begin(), r.candidates.end(), [](const auto& c) {
    return detail::provider_of(c.variant) != nullptr;
  });
  EXPECT_EQ(r.candidates.size() - static_cast<std::size_t>(from_providers),
            variant_space(Precision::highest).size() + 1);
  const CandidateResult* plan = nullptr;
  for (const auto& c : r.candidates)
    if (c.variant == "rowsplit_h1024") plan = &c;
  ASSERT_NE(plan, nullptr);
  // The exhaustive search gives up no timing: the plan is timed in full however slow.
  EXPECT_EQ(plan->status, CandidateStatus::ok) << to_string(plan->status) << ": " << plan->reason;
  // Nothing is pruned untimed. The one exception the exhaustive search keeps (docs/tuning.md,
  // "The rotated look at the finalists"): a candidate faster on the same buffers than the winner
  // but behind it on rotated inputs, which was timed in full before the look ranked it.
  const auto winner = std::find_if(r.candidates.begin(), r.candidates.end(),
                                   [&](const auto& c) { return c.variant == r.winner; });
  ASSERT_NE(winner, r.candidates.end()) << r.winner;
  for (const auto& c : r.candidates) {
    if (c.status != CandidateStatus::pruned) continue;
    EXPECT_GT(c.stats.samples, 0) << c.variant << ": " << c.reason;
    EXPECT_LT(c.stats.median_ms, winner->stats.median_ms) << c.variant << ": " << c.reason;
    EXPECT_EQ(c.reason.rfind("slower on rotated inputs (L2-cold): ", 0), 0u) << c.variant << ": " << c.reason;
  }
  const AutotuneResult core = autotune(1024, 36, 20);
  const AutotuneResult rest = autotune(6, 36, 20);
  EXPECT_EQ(core.source, ResultSource::cache);
  EXPECT_EQ(rest.source, ResultSource::cache);
  // The reason names the parts' winners; a pruned plan (timings under compute-sanitizer are
  // far from the real ones) gives them after the rule that pruned it.
  const std::string parts = "rows 0-1023: " + core.winner + "; rows 1024-1029: " + rest.winner;
  if (plan->status == CandidateStatus::ok) {
    EXPECT_EQ(plan->reason, parts);
  } else {
    const std::string tail = " (" + parts + ")";
    EXPECT_TRUE(plan->reason.size() > tail.size() &&
                plan->reason.compare(plan->reason.size() - tail.size(), tail.size(), tail) == 0)
        << plan->reason;
  }
  const auto check = testing::check_gemm(1030, 36, 20, 1.5f, 0.5f, [](const GemmArgs& a) { gemm(a); });
  EXPECT_EQ(check.wrong, 0) << check.first;
  EXPECT_EQ(tunings_run(), before + 3);
}

TEST(Dispatch, InvalidArgumentsAreRejectedBeforeAnyLookup) {
  GemmArgs a = no_op;
  a.M = -3;
  EXPECT_THROW(gemm(a), InvalidArgument);
  EXPECT_THROW(autotune(0, 5, 5), InvalidArgument);
  EXPECT_THROW(autotune(5, -5, 5), InvalidArgument);
}

TEST(CachePath, FollowsTilemmCacheThenXdgThenHome) {
  const std::string saved = std::getenv("TILEMM_CACHE");
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  setenv("TILEMM_CACHE", "/tmp/x/explicit.db", 1);
  EXPECT_EQ(cache_path(), "/tmp/x/explicit.db");
  unsetenv("TILEMM_CACHE");
  setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  EXPECT_EQ(cache_path(), "/tmp/xdg/tilemm/tuning.db");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/tmp/home", 1);
  EXPECT_EQ(cache_path(), "/tmp/home/.cache/tilemm/tuning.db");
  setenv("TILEMM_CACHE", saved.c_str(), 1);
  setenv("HOME", saved_home.c_str(), 1);
}

// --- TunePolicy::background --------------------------------------------------------------------

// The first call runs a fallback at once, the worker tunes the shape while the caller keeps
// calling, every result is right throughout, and once the winner is stored later calls run it.
TEST(Background, CallsStayCorrectWhileTheShapeTunesAndThenRunTheStoredWinner) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t m = 392, n = 168, k = 232;  // not preloaded, no row-split plan
  Options background;
  background.policy = TunePolicy::background;
  const auto run = [&](const GemmArgs& a) { gemm(a, nullptr, background); };
  const auto before = tunings_run();
  const std::string device_key = current_device().model_key();
  const auto stored = [&] {
    return cache::TuningStore(cache_path()).find(device_key, m, n, k, "a4-dense", false);
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  int calls = 0;
  while (!stored() && std::chrono::steady_clock::now() < deadline) {
    const auto check = testing::check_gemm(m, n, k, 1.0f, 0.5f, run);
    ASSERT_EQ(check.wrong, 0) << "call " << calls << ": " << check.first;
    ++calls;
  }
  const auto entry = stored();
  ASSERT_TRUE(entry) << "not tuned in the background within 5 minutes";
  api::process_dispatcher().wait_for_background_tunings();
  const auto decision =
      api::process_dispatcher().find(dispatch::key_of(current_device().ordinal, Problem::dense(m, n, k)));
  ASSERT_TRUE(decision);
  EXPECT_FALSE(decision->fallback);
  // The stored winner is what runs: a loaded kernel, or a provider's prepared candidate.
  ASSERT_TRUE(decision->kernel != nullptr || decision->prepared != nullptr);
  if (decision->kernel != nullptr) {
    EXPECT_EQ(variant_name(decision->kernel->variant), entry->winner);
  } else {
    EXPECT_EQ(entry->winner.rfind("cublaslt_", 0), 0u) << entry->winner;
  }
  EXPECT_EQ(tunings_run(), before + 1);
  const auto check = testing::check_gemm(m, n, k, 1.0f, 0.5f, run);
  EXPECT_EQ(check.wrong, 0) << check.first;
}

// A process under TILEMM_TUNE=background returns from main() while its worker may be compiling,
// timing or storing: it exits 0 (no crash in a torn-down CUDA runtime, no hang), its results were
// right, and its cache holds the shape's whole entry or none, and no lease.
TEST(Background, AProcessEndingMidTuningExitsCleanlyWithAWholeEntryOrNone) {
  TILEMM_REQUIRE_DEVICE();
  const std::string shape = "520x264x328";  // not preloaded, no row-split plan
  const std::string lease_key =
      current_device().model_key() + "|520x264x328 (" + problem_class(Problem::dense(520, 264, 328)) + ")";
  for (const int linger_ms : {0, 50, 400, 3000}) {
    SCOPED_TRACE("linger " + std::to_string(linger_ms) + " ms");
    testing::TempDir dir;
    const std::string db = dir.file("tuning.db");
    const std::string command = "TILEMM_TUNE=background TILEMM_LOG=info TILEMM_CACHE='" + db + "' " +
                                std::string(TILEMM_DISPATCH_CHILD) + " --may-tune --linger-ms " +
                                std::to_string(linger_ms) + " " + shape + " 2>&1";
    const auto start = std::chrono::steady_clock::now();
    std::FILE* pipe = popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    const auto [output, exited_zero] = finish_child(pipe);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(exited_zero) << output;
    EXPECT_NE(output.find("shape " + shape + " wrong=0"), std::string::npos) << output;
    EXPECT_LT(seconds, 120.0) << output;  // the exit waited for one candidate at most
    cache::TuningStore store(db);
    if (const auto entry = store.find(current_device().model_key(), 520, 264, 328,
                                      problem_class(Problem::dense(520, 264, 328)), true)) {
      EXPECT_FALSE(entry->winner.empty());
      ASSERT_FALSE(entry->candidates.empty()) << output;
      bool winner_listed = false;
      for (const auto& c : entry->candidates)
        winner_listed |= c.variant == entry->winner && c.status == CandidateStatus::ok;
      EXPECT_TRUE(winner_listed) << output;
    }
    EXPECT_TRUE(store.try_acquire_lease(lease_key, "test", 1.0)) << "a lease was left behind\n"
                                                                 << output;
  }
}

}  // namespace
}  // namespace tilemm

// Every test process gets a private, empty cache, so tests neither see nor leave results.
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tilemm::testing::TempDir dir;
  tilemm::cache_dir = &dir;
  setenv("TILEMM_CACHE", dir.file("tuning.db").c_str(), 1);
  return RUN_ALL_TESTS();
}
