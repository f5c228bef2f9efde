// The dispatcher's logic on the CPU: a fake store, a fake tuner and a fake kernel loader stand in
// for SQLite, the GPU tuning and the CUDA runtime (src/dispatch/dispatcher.hpp): the order of
// the sources a call asks, staleness, stored CUBINs, leases between processes, row-split plans
// and what a reduced-precision tuning is given. Vendor candidates' results:
// test_dispatcher_vendor.cpp; TunePolicy::background: test_dispatcher_background.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dispatcher_rig.hpp"
#include "kernel_sources.hpp"
#include "tuning_history.hpp"

namespace tilemm::dispatch {
namespace {

using namespace rig;  // NOLINT(google-build-using-namespace): the fakes every test here uses

TEST(Dispatcher, MemoryServesBeforeTheCacheWhichServesBeforeThePreloadedResults) {
  Rig rig({stored(kShape, "tiled_t8_p0", "preloaded")});
  rig.store->add(stored(kShape, "tiled_t32_p0"));
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t32_p0");  // the cache before preloaded
  rig.store->add(stored(kShape, "tiled_t16_p1"));          // changed behind the memo's back
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t32_p0");  // memory before the cache
  EXPECT_EQ(kernel_of(*rig.dispatcher->find(key_of(0, kShape))), "tiled_t32_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
  // Reading the preloaded results costs tens of milliseconds: a shape the cache serves never
  // asks for them.
  EXPECT_EQ(rig.preloaded_reads, 0);
  EXPECT_EQ(rig.header_reads, 0);
}

// A gemm() needs no candidates: it is served from the preloaded entries without them, and never
// makes the process read the candidate tables; autotune() returns the candidates it always did.
TEST(Dispatcher, GemmReadsThePreloadedEntriesWithoutCandidatesAndAutotuneWithThem) {
  const Problem shipped = Problem::dense(256, 256, 256, 4);
  const Problem part = Problem::dense(4096, 4096, 4096, 4);
  Rig rig({stored(shipped, "tiled_t8_p0", "preloaded"), stored(part, "tiled_t32_p0", "preloaded")});
  ASSERT_FALSE(rig.preloaded[0].candidates.empty());
  EXPECT_EQ(kernel_of(rig.gemm(shipped)), "tiled_t8_p0");
  EXPECT_GT(rig.header_reads, 0);
  // The fallback of a call that may not tune looks at the same entries.
  EXPECT_EQ(kernel_of(rig.gemm(Problem::dense(4000, 4000, 4000, 4), TunePolicy::off)), "tiled_t32_p0");
  EXPECT_EQ(rig.preloaded_reads, 0);
  EXPECT_TRUE(rig.tuner->tuned.empty());

  const int headers_before = rig.header_reads;
  const AutotuneResult r = rig.autotune(shipped);
  EXPECT_EQ(r.source, ResultSource::preloaded);
  EXPECT_EQ(r.winner, "tiled_t8_p0");
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].variant, "tiled_t8_p0");
  EXPECT_EQ(rig.preloaded_reads, 1);
  EXPECT_EQ(rig.header_reads, headers_before + 1);  // found among the headers first
}

// A shape the shipped results lack is found missing among the entries without candidates: an
// autotune() of it never parses the candidate tables (the bulk of the shipped file), which would
// make the first call of a process block for as long.
TEST(Dispatcher, AnAutotuneMissReadsNoPreloadedCandidateTables) {
  Rig rig({stored(Problem::dense(256, 256, 256, 4), "tiled_t8_p0", "preloaded")});
  const AutotuneResult r = rig.autotune(Problem::dense(300, 200, 100, 4), TunePolicy::off);
  EXPECT_EQ(r.source, ResultSource::fallback);
  EXPECT_GT(rig.header_reads, 0);
  EXPECT_EQ(rig.preloaded_reads, 0);
}

// A budgeted tuning ranks its candidates by the shapes measured before, the shipped ones among
// them: it reads their timed candidates, never the full candidate tables.
TEST(Dispatcher, ABudgetedTuningsHistoryReadsOnlyThePreloadedTimedCandidates) {
  Rig rig({stored(Problem::dense(256, 256, 256, 4), "tiled_t8_p0", "preloaded")});
  Options budgeted;
  ASSERT_GT(budgeted.tune_budget_ms, 0.0) << "the default tuning is budgeted";
  const AutotuneResult r = rig.autotune(Problem::dense(300, 200, 100, 4));
  EXPECT_EQ(r.source, ResultSource::tuned);
  EXPECT_GT(rig.timed_reads, 0);
  EXPECT_EQ(rig.preloaded_reads, 0);
}

// Compile once per machine: a tuning takes each candidate's CUBIN from the store when it is there
// (reading the image once), and stores what it compiles, so a later tuning of any shape (here or in
// another process with the same cache) compiles nothing it compiled before. A shared store serves
// and keeps none.
TEST(Dispatcher, ATuningCompilesOnlyTheCandidatesTheStoreLacksAndStoresThem) {
  Rig rig;
  rig.tuner->candidates = {"tiled_t8_p0", "tiled_t32_p1"};
  rig.store->cubins["tiled_t8_p0"] = {'S'};
  rig.gemm(kShape);
  EXPECT_EQ(rig.tuner->binaries, (std::vector<std::string>{"tiled_t8_p0 S", "tiled_t32_p1 C"}));
  EXPECT_EQ(rig.loader->started, std::vector<std::string>{"tiled_t32_p1"});
  EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t32_p1"});
  EXPECT_EQ(rig.store->cubin_reads["tiled_t8_p0"], 1);  // its image read once, when it is used
  ASSERT_TRUE(rig.store->cubins.count("tiled_t32_p1"));
  rig.gemm(Problem::dense(256, 512, 512, 4));  // another shape: nothing compiled again
  EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t32_p1"});
  EXPECT_EQ(rig.tuner->binaries.back(), "tiled_t32_p1 C");

  Rig shared;
  shared.store->shared = true;
  shared.store->cubins["tiled_t8_p0"] = {'S'};
  shared.tuner->candidates = {"tiled_t8_p0"};
  shared.gemm(kShape);
  EXPECT_EQ(shared.tuner->binaries, std::vector<std::string>{"tiled_t8_p0 C"});  // not its CUBIN
  EXPECT_EQ(shared.store->cubins.at("tiled_t8_p0"), std::vector<char>{'S'});     // nor replaced
}

TEST(Dispatcher, PreloadedServesBeforeTuningAndTuningIsTheLastResort) {
  const Problem shipped = Problem::dense(256, 256, 256, 4);
  Rig rig({stored(shipped, "tiled_t8_p0", "preloaded")});
  EXPECT_EQ(kernel_of(rig.gemm(shipped)), "tiled_t8_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
  const auto before = Dispatcher::tunings_counted();
  rig.tuner->winners[kShape.M] = "tiled_t32_p1";
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t32_p1");
  EXPECT_EQ(rig.tuner->tuned, std::vector<std::int64_t>{kShape.M});
  EXPECT_EQ(Dispatcher::tunings_counted(), before + 1);
  // Stored, with this build's versions, and its CUBIN kept for the next process.
  ASSERT_NE(rig.store->at(kShape), nullptr);
  EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t32_p1");
  EXPECT_EQ(rig.store->at(kShape)->source, "tuned");
  EXPECT_TRUE(is_fresh(*rig.store->at(kShape), running_versions(device(), kShape)));
  EXPECT_EQ(rig.store->cubins.count("tiled_t32_p1"), 1u);
}

TEST(Dispatcher, AutotuneAsksTheSameSourcesInTheSameOrderAndForceRetunes) {
  const Problem shipped = Problem::dense(256, 256, 256, 4);
  Rig rig({stored(shipped, "tiled_t8_p0", "preloaded"), stored(kShape, "tiled_t8_p1", "preloaded")});
  rig.store->add(stored(kShape, "tiled_t32_p0", "imported"));
  AutotuneResult r = rig.autotune(kShape);
  EXPECT_EQ(r.source, ResultSource::imported);
  EXPECT_EQ(r.winner, "tiled_t32_p0");
  EXPECT_EQ(r.candidates.size(), 1u);  // autotune() reads the candidates too
  r = rig.autotune(shipped);
  EXPECT_EQ(r.source, ResultSource::preloaded);
  EXPECT_TRUE(rig.tuner->tuned.empty());
  // The winner is made ready for gemm(): loaded and remembered.
  EXPECT_EQ(kernel_of(*rig.dispatcher->find(key_of(0, shipped))), "tiled_t8_p0");

  r = rig.autotune(kShape, TunePolicy::tune_on_miss, /*force=*/true);
  EXPECT_EQ(r.source, ResultSource::tuned);
  EXPECT_EQ(r.winner, "tiled_t16_p0");
  EXPECT_EQ(rig.tuner->tuned, std::vector<std::int64_t>{kShape.M});
  EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t16_p0");  // replaced
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t16_p0");
}

TEST(Dispatcher, TuningOffFallsBackToTheNearestTunedShapeElseTheDefaultVariant) {
  Rig rig({stored(Problem::dense(4096, 4096, 4096, 4), "tiled_t8_p0", "preloaded")});
  rig.store->add(stored(Problem::dense(1024, 1024, 1024, 4), "tiled_t32_p0"));
  rig.store->add(stored(Problem::dense(1000, 1000, 1000, 1), "tiled_t8_p1"));  // another class
  Decision d = rig.gemm(Problem::dense(900, 900, 900, 4), TunePolicy::off);
  EXPECT_TRUE(d.fallback);
  EXPECT_EQ(kernel_of(d), "tiled_t32_p0");
  d = rig.gemm(Problem::dense(4000, 4000, 4000, 4), TunePolicy::off);  // nearer the preloaded one
  EXPECT_EQ(kernel_of(d), "tiled_t8_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
  // The choice reads the cache's entries without their candidates, which a tuned entry holds by
  // the hundred: a new shape's first call must not read them all.
  EXPECT_GE(rig.store->listings_without, 2);
  EXPECT_EQ(rig.store->listings_with_candidates, 0);

  Rig empty;
  d = empty.gemm(Problem::dense(900, 900, 900, 4), TunePolicy::off);
  EXPECT_TRUE(d.fallback);
  EXPECT_EQ(kernel_of(d), variant_name(default_variant()));
  const AutotuneResult r = empty.autotune(Problem::dense(91, 93, 95, 4), TunePolicy::off);
  EXPECT_EQ(r.source, ResultSource::fallback);
  EXPECT_EQ(r.winner, variant_name(default_variant()));
  EXPECT_TRUE(r.candidates.empty());
  EXPECT_TRUE(empty.tuner->tuned.empty());
}

TEST(Dispatcher, AFallbackIsResolvedAgainOnceACallMayTune) {
  Rig rig;
  EXPECT_TRUE(rig.gemm(kShape, TunePolicy::off).fallback);
  EXPECT_TRUE(rig.gemm(kShape, TunePolicy::off).fallback);  // remembered for calls that may not tune
  EXPECT_TRUE(rig.tuner->tuned.empty());
  rig.tuner->winners[kShape.M] = "tiled_t32_p1";
  const Decision tuned = rig.gemm(kShape);
  EXPECT_FALSE(tuned.fallback);
  EXPECT_EQ(kernel_of(tuned), "tiled_t32_p1");
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);
  EXPECT_EQ(kernel_of(rig.gemm(kShape, TunePolicy::off)), "tiled_t32_p1");  // now the answer
  // autotune() under off remembers its answer as a fallback too.
  const Problem other = Problem::dense(64, 64, 64, 4);
  rig.autotune(other, TunePolicy::off);
  EXPECT_TRUE(rig.dispatcher->find(key_of(0, other))->fallback);
}

TEST(Dispatcher, StaleEntriesAreIgnoredForEachVersionField) {
  const auto stale = [](const std::function<void(StoredEntry&)>& change) {
    StoredEntry e = stored(kShape, "tiled_t32_p0");
    change(e);
    return e;
  };
  for (const auto& entry :
       {stale([](StoredEntry& e) { e.versions.template_hash = "ffffffffffffffff"; }),
        stale([](StoredEntry& e) { e.versions.nvrtc_version = 12090; }),
        stale([](StoredEntry& e) { e.versions.driver_version = 12080; })}) {
    Rig rig;
    rig.store->add(entry);
    EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t16_p0");  // tuned, not the stale winner
    EXPECT_EQ(rig.tuner->tuned.size(), 1u);
    EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t16_p0");
  }
  // A preloaded result is stale only under other templates: another NVRTC still serves.
  StoredEntry shipped = stored(kShape, "tiled_t8_p0", "preloaded");
  shipped.versions.nvrtc_version = 12090;
  shipped.versions.driver_version = 12080;
  Rig served({shipped});
  EXPECT_EQ(kernel_of(served.gemm(kShape)), "tiled_t8_p0");
  shipped.versions.template_hash = "ffffffffffffffff";
  Rig ignored({shipped});
  EXPECT_EQ(kernel_of(ignored.gemm(kShape)), "tiled_t16_p0");
  EXPECT_EQ(ignored.tuner->tuned.size(), 1u);
}

TEST(Dispatcher, UnusableWinnersAreMisses) {
  DeviceInfo small = device();
  small.max_threads_per_block = 256;  // tiled_t32 needs 1024 threads
  ASSERT_FALSE(can_run(parse_variant("tiled_t32_p0"), small, kShape));
  const Problem planned = Problem::dense(1100, 260, 300, 4);
  for (const auto& [problem, winner] : std::vector<std::pair<Problem, std::string>>{
           {kShape, "warptile_of_a_newer_build"}, {planned, "rowsplit_h5000"},
           {planned, "rowsplit_h1099"}}) {  // a plan tuning never makes, whose part might be one
    Rig rig({stored(problem, "tiled_t8_p0", "preloaded")});
    rig.store->add(stored(problem, winner));
    EXPECT_EQ(kernel_of(rig.gemm(problem)), "tiled_t8_p0") << winner;  // the next source serves
  }
  Rig rig;
  rig.store->add(stored(kShape, "tiled_t32_p0"));
  Options options;
  const Decision d = rig.dispatcher->resolve(small, kShape, key_of(0, kShape), options);
  EXPECT_EQ(kernel_of(d), "tiled_t16_p0");
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);
  EXPECT_EQ(why_unusable("tiled_t32_p0", small, kShape).rfind("it cannot run here", 0), 0u);
}

TEST(Dispatcher, ABrokenCacheIsAMissEverywhereAndTheCallStillRuns) {
  Rig rig;
  rig.store->fail = true;
  const AutotuneResult r = rig.autotune(kShape);
  EXPECT_EQ(r.source, ResultSource::tuned);
  EXPECT_EQ(kernel_of(*rig.dispatcher->find(key_of(0, kShape))), "tiled_t16_p0");
  EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t16_p0"});
  EXPECT_EQ(kernel_of(rig.gemm(Problem::dense(700, 700, 700, 4), TunePolicy::off)),
            variant_name(default_variant()));
}

TEST(Dispatcher, StoredCubinsLoadFromAPrivateCacheOnlyAndABadOneIsReplaced) {
  {
    Rig rig;
    rig.store->add(stored(kShape, "tiled_t32_p0"));
    rig.store->cubins["tiled_t32_p0"] = {'S'};
    rig.gemm(kShape);
    EXPECT_TRUE(rig.loader->compiled.empty());
    EXPECT_EQ(rig.loader->loads, std::vector<std::string>{"tiled_t32_p0 from S"});
  }
  {
    Rig rig;  // shared: its CUBIN is not loaded, and it gets none
    rig.store->shared = true;
    rig.store->add(stored(kShape, "tiled_t32_p0"));
    rig.store->cubins["tiled_t32_p0"] = {'S'};
    rig.gemm(kShape);
    EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t32_p0"});
    EXPECT_EQ(rig.loader->loads, std::vector<std::string>{"tiled_t32_p0 from C"});
    EXPECT_EQ(rig.store->cubins.at("tiled_t32_p0"), std::vector<char>{'S'});
  }
  {
    Rig rig;  // rejected: recompiled, and the new image replaces it
    rig.store->add(stored(kShape, "tiled_t32_p0"));
    rig.store->cubins["tiled_t32_p0"] = {'X'};
    rig.gemm(kShape);
    EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t32_p0"});
    EXPECT_EQ(rig.store->cubins.at("tiled_t32_p0"), std::vector<char>{'C'});
  }
}

// The lease: another process tunes the shape; this one waits, then serves its stored result.
TEST(Dispatcher, ASecondProcessWaitsForTheLeaseAndServesTheFirstOnesResult) {
  Rig rig({}, LeaseTimes{300.0, 600.0, std::chrono::milliseconds(1)});
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  rig.store->leases[key] = {"host:2", 300.0};
  int attempts = 0;
  rig.store->other_process = [&](FakeStore& s) {
    if (++attempts < 3) return;
    s.add(stored(kShape, "tiled_t32_p0"));  // the other process stores its result ...
    s.leases.erase(key);                    // ... and releases the lease
  };
  const auto before = Dispatcher::tunings_counted();
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t32_p0");
  EXPECT_EQ(attempts, 3);
  EXPECT_TRUE(rig.tuner->tuned.empty());
  EXPECT_EQ(Dispatcher::tunings_counted(), before);
}

TEST(Dispatcher, AnExpiredLeaseIsTakenOverAndAWaiterGivesUpAfterItsBound) {
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  {
    Rig rig({}, LeaseTimes{300.0, 600.0, std::chrono::milliseconds(1)});
    rig.store->leases[key] = {"host:2", -1.0};  // its holder died
    EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t16_p0");
    EXPECT_EQ(rig.tuner->tuned.size(), 1u);
    EXPECT_EQ(rig.store->lease_log, (std::vector<std::string>{"take host:1", "release host:1"}));
    EXPECT_EQ(rig.store->leases.count(key), 0u);
  }
  {
    Rig rig({}, LeaseTimes{300.0, 0.02, std::chrono::milliseconds(1)});
    rig.store->leases[key] = {"host:2", 300.0};  // held, and never released
    EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t16_p0");
    EXPECT_EQ(rig.tuner->tuned.size(), 1u);
    EXPECT_EQ(rig.store->leases.at(key).owner, "host:2");  // never this process's
  }
}

// Another process finished and released the lease between this one's miss and its lease: its
// result serves, unless this call is forced to measure anew.
TEST(Dispatcher, ALeaseTakenAfterAnotherProcessStoredItsResultServesThatResult) {
  for (const bool force : {false, true}) {
    Rig rig;
    rig.store->before_lease = [](FakeStore& s) {
      if (!s.at(kShape)) s.add(stored(kShape, "tiled_t32_p0"));
    };
    const AutotuneResult r = rig.autotune(kShape, TunePolicy::tune_on_miss, force);
    EXPECT_EQ(r.source, force ? ResultSource::tuned : ResultSource::cache) << force;
    EXPECT_EQ(r.winner, force ? "tiled_t16_p0" : "tiled_t32_p0");
    EXPECT_EQ(rig.tuner->tuned.size(), force ? 1u : 0u);
  }
}

TEST(Dispatcher, APlanStoresItsPartsAndTheirWinnersServeItsRows) {
  const Problem planned = Problem::dense(1100, 260, 300, 4);
  Rig rig;
  rig.tuner->winners[1100] = "rowsplit_h1024";
  rig.tuner->part_winners = {{1024, "tiled_t32_p0"}, {76, "tiled_t8_p0"}};
  const auto before = Dispatcher::tunings_counted();
  const AutotuneResult r = rig.autotune(planned);
  EXPECT_EQ(r.winner, "rowsplit_h1024");
  EXPECT_EQ(Dispatcher::tunings_counted(), before + 3);  // the shape and its two parts
  EXPECT_EQ(rig.tuner->tuned, std::vector<std::int64_t>{1100});  // the tuner tuned the parts
  EXPECT_EQ(rig.store->puts, 1);  // all three in one transaction
  ASSERT_NE(rig.store->at(detail::rows_of(planned, 1024)), nullptr);
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 1024))->winner, "tiled_t32_p0");
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 76))->winner, "tiled_t8_p0");
  EXPECT_EQ(rig.store->cubins.count("tiled_t32_p0") + rig.store->cubins.count("tiled_t8_p0"), 2u);
  // gemm() splits the rows; each part is served by its stored winner, without tuning.
  EXPECT_EQ(rig.gemm(planned).split_rows, 1024);
  EXPECT_EQ(kernel_of(*rig.dispatcher->find(key_of(0, detail::rows_of(planned, 1024)))), "tiled_t32_p0");
  EXPECT_EQ(kernel_of(rig.gemm(detail::rows_of(planned, 76))), "tiled_t8_p0");
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);
}

TEST(Dispatcher, APlansPartWithAResultAlreadyIsNotTunedAgainUnlessForced) {
  const Problem planned = Problem::dense(1100, 260, 300, 4);
  Rig rig;
  rig.store->add(stored(detail::rows_of(planned, 1024), "tiled_t32_p0"));
  rig.store->add(stored(detail::rows_of(planned, 76), "warptile_of_a_newer_build"));  // unusable
  rig.tuner->winners[1100] = "rowsplit_h1024";
  rig.tuner->part_winners = {{1024, "tiled_t16_p1"}, {76, "tiled_t8_p0"}};
  rig.autotune(planned);
  ASSERT_EQ(rig.tuner->known.size(), 1u);
  EXPECT_EQ(rig.tuner->known[0], (std::map<std::int64_t, std::string>{{1024, "tiled_t32_p0"}}));
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 1024))->winner, "tiled_t32_p0");  // kept
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 76))->winner, "tiled_t8_p0");     // tuned
  rig.autotune(planned, TunePolicy::tune_on_miss, /*force=*/true);
  ASSERT_EQ(rig.tuner->known.size(), 2u);
  EXPECT_TRUE(rig.tuner->known[1].empty());  // forced: every part measured anew
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 1024))->winner, "tiled_t16_p1");
}

Problem at(Problem p, Precision precision) {
  p.precision = precision;
  return p;
}

// Below highest, a tuning is given the winner of the shape's fresh highest result (the cache's,
// else the preloaded one), which it times like any candidate; a highest tuning, a shape without
// one or with a stale one is given none.
TEST(Dispatcher, AReducedPrecisionTuningIsGivenTheShapesFreshHighestWinner) {
  const Problem high = at(kShape, Precision::high);
  const std::string cached = "tiled_t32_p0", shipped = "tiled_t8_p0";
  {
    Rig rig;  // nothing known for highest: unchanged
    rig.autotune(high);
    ASSERT_EQ(rig.tuner->highest.size(), 1u);
    EXPECT_EQ(rig.tuner->highest[0], "");
  }
  {
    Rig rig({stored(kShape, shipped, "preloaded")});
    rig.store->add(stored(kShape, cached));
    rig.autotune(high);
    rig.autotune(at(kShape, Precision::medium));
    rig.autotune(high, TunePolicy::tune_on_miss, /*force=*/true);  // forced: its name still given
    rig.autotune(kShape, TunePolicy::tune_on_miss, /*force=*/true);  // highest itself: none
    EXPECT_EQ(rig.tuner->highest, (std::vector<std::string>{cached, cached, cached, ""}));
    // The cache's entry is stale: the preloaded one serves; both stale: none.
    StoredEntry stale = stored(kShape, cached);
    stale.versions.template_hash = "ffffffffffffffff";
    rig.store->add(stale);
    rig.autotune(high, TunePolicy::tune_on_miss, true);
    rig.preloaded[0].versions.template_hash = "ffffffffffffffff";
    rig.preloaded_headers[0].versions.template_hash = "ffffffffffffffff";
    rig.autotune(high, TunePolicy::tune_on_miss, true);
    ASSERT_EQ(rig.tuner->highest.size(), 6u);
    EXPECT_EQ(rig.tuner->highest[4], shipped);
    EXPECT_EQ(rig.tuner->highest[5], "");
  }
  {
    // An entry of another class is another shape's.
    Rig rig;
    rig.store->add(stored(Problem::dense(512, 512, 512, 1), cached));
    rig.autotune(high);
    EXPECT_EQ(rig.tuner->highest, std::vector<std::string>{""});
  }
}

TEST(Dispatcher, AReducedPrecisionTuningIsGivenTheHighestPlanAndItsPartsWinners) {
  const Problem planned = Problem::dense(1100, 260, 300, 4);
  Rig rig;
  rig.store->add(stored(planned, "rowsplit_h1024"));
  rig.store->add(stored(detail::rows_of(planned, 1024), "tiled_t32_p0"));
  rig.store->add(stored(detail::rows_of(planned, 76), "tiled_t8_p0"));
  rig.tuner->winners[1100] = "rowsplit_h1024";
  rig.tuner->part_winners = {{1024, "tiled_t32_p0"}, {76, "tiled_t8_p0"}};
  const AutotuneResult r = rig.autotune(at(planned, Precision::high));
  ASSERT_EQ(rig.tuner->highest.size(), 1u);
  EXPECT_EQ(rig.tuner->highest[0], "rowsplit_h1024");
  EXPECT_EQ(rig.tuner->highest_parts[0],
            (std::map<std::int64_t, std::string>{{1024, "tiled_t32_p0"}, {76, "tiled_t8_p0"}}));
  // The high parts are not the highest ones: tuned with the shape and stored at high.
  EXPECT_TRUE(rig.tuner->known[0].empty());
  EXPECT_EQ(r.winner, "rowsplit_h1024");
  ASSERT_NE(rig.store->at(at(detail::rows_of(planned, 76), Precision::high)), nullptr);
  EXPECT_EQ(rig.store->at(at(detail::rows_of(planned, 76), Precision::high))->winner, "tiled_t8_p0");
  EXPECT_EQ(rig.store->at(detail::rows_of(planned, 76))->precision, Precision::highest);
}

TEST(Resolution, TheSourcesAndWhichMayAnswerACall) {
  EXPECT_EQ(kResolutionOrder.front(), Source::memory);
  EXPECT_EQ(kResolutionOrder.back(), Source::fallback);
  const Call gemm_on{TunePolicy::tune_on_miss, false, false};
  const Call gemm_off{TunePolicy::off, false, false};
  const Call forced{TunePolicy::tune_on_miss, true, true};
  EXPECT_TRUE(may_answer(Source::memory, gemm_on));
  EXPECT_FALSE(may_answer(Source::memory, forced));  // autotune() wants the candidates
  EXPECT_FALSE(may_answer(Source::cache, forced));
  EXPECT_FALSE(may_answer(Source::preloaded, forced));
  EXPECT_TRUE(may_answer(Source::tuning, gemm_on));
  EXPECT_FALSE(may_answer(Source::tuning, gemm_off));
  EXPECT_TRUE(may_answer(Source::fallback, gemm_off));
  EXPECT_FALSE(may_answer(Source::fallback, gemm_on));
  const Call gemm_background{TunePolicy::background, false, false};
  EXPECT_FALSE(may_answer(Source::tuning, gemm_background));  // never on the caller's thread
  EXPECT_TRUE(may_answer(Source::fallback, gemm_background));
}

// Options{} reads TILEMM_TUNE once per process: a later change is not seen.
TEST(OptionsPolicy, TheEnvironmentIsReadOnce) {
  const TunePolicy first = Options{}.policy;
  setenv("TILEMM_TUNE", first == TunePolicy::off ? "on" : "off", 1);
  EXPECT_EQ(Options{}.policy, first);
  EXPECT_EQ(Options::policy_from_environment(), first);
}

TEST(Dispatcher, ABudgetedTuningRanksByTheShapesMeasuredBeforeOfItsClass) {
  const Problem shipped = Problem::square(512);
  const Problem cached = Problem::square(1024);
  const Problem other_class = Problem::dense(1000, 1001, 1000, 1);  // class a1
  Rig rig({stored(shipped, "tiled_t16_p0", "preloaded")});
  rig.store->put_all({stored(cached, "tiled_t32_p0"), stored(other_class, "tiled_t8_p0")});
  Options budgeted;
  budgeted.tune_budget_ms = 1500;
  rig.dispatcher->autotune(device(), Problem::square(800), budgeted);
  Options exhaustive;
  exhaustive.tune_budget_ms = 0;
  rig.dispatcher->autotune(device(), Problem::square(900), exhaustive);
  ASSERT_EQ(rig.tuner->searches.size(), 2u);
  EXPECT_EQ(rig.tuner->searches[0].first, 1500);
  std::set<std::int64_t> history;
  for (const auto& shape : rig.tuner->searches[0].second) history.insert(shape.M);
  EXPECT_EQ(history, (std::set<std::int64_t>{512, 1024}));  // not the a1 shape
  // The cache's candidates are read entry by entry, never in one listing of them all.
  EXPECT_EQ(rig.store->listings_with_candidates, 0);
  EXPECT_EQ(rig.tuner->searches[1].first, 0);
  EXPECT_TRUE(rig.tuner->searches[1].second.empty());  // the exhaustive search ranks nothing
}

// A process that tunes shape after shape reads each cache entry's candidates once: a later
// tuning reads only the entries stored or rewritten since, and sees what a rewrite stored.
TEST(Dispatcher, LaterTuningsReadOnlyTheCacheEntriesWrittenSinceTheirHistory) {
  Rig rig;
  const Problem first = Problem::square(1024), second = Problem::square(2048);
  rig.store->put_all({stored(first, "tiled_t32_p0"), stored(second, "tiled_t16_p0")});
  Options budgeted;
  budgeted.tune_budget_ms = 1500;
  const auto medians_of = [&](std::size_t search, std::int64_t m) {
    for (const auto& shape : rig.tuner->searches.at(search).second)
      if (shape.M == m) return shape.median_ms;
    return std::map<std::string, double>{};
  };
  const auto reads = [&](std::int64_t m) { return rig.store->candidate_reads[m]; };

  rig.dispatcher->autotune(device(), Problem::square(800), budgeted);
  rig.dispatcher->autotune(device(), Problem::square(900), budgeted);
  EXPECT_EQ(reads(1024), 1);
  EXPECT_EQ(reads(2048), 1);
  EXPECT_EQ(medians_of(1, 1024), (std::map<std::string, double>{{"tiled_t32_p0", 1.0}}));
  EXPECT_EQ(rig.tuner->searches[1].second.size(), 3u);  // with 800, stored by the first tuning

  // Rewritten by a later tuning (here or in another process): read again, with its new medians.
  StoredEntry retuned = stored(first, "tiled_t8_p0");
  retuned.tuned_at = "2026-11-30T00:00:00Z";
  retuned.candidates[0].stats.median_ms = 0.25;
  rig.store->put_all({retuned});
  rig.dispatcher->autotune(device(), Problem::square(1000), budgeted);
  EXPECT_EQ(reads(1024), 2);
  EXPECT_EQ(reads(2048), 1);
  EXPECT_EQ(medians_of(2, 1024), (std::map<std::string, double>{{"tiled_t8_p0", 0.25}}));
  EXPECT_EQ(medians_of(2, 2048), (std::map<std::string, double>{{"tiled_t16_p0", 1.0}}));

  // Removed: gone from the history.
  rig.store->entries.erase({1024, 1024, 1024, class_of(first), first.precision,
                            cache::CandidateSet::with_vendor});
  rig.dispatcher->autotune(device(), Problem::square(1100), budgeted);
  EXPECT_TRUE(medians_of(3, 1024).empty());
  EXPECT_EQ(medians_of(3, 2048), (std::map<std::string, double>{{"tiled_t16_p0", 1.0}}));
}

// However large the cache, a tuning reads the candidates of the nearest kHistoryEntries entries
// of its class only.
TEST(Dispatcher, ATuningReadsTheCandidatesOfTheNearestEntriesOnly) {
  Rig rig;
  const std::int64_t count = static_cast<std::int64_t>(kHistoryEntries) + 1;
  for (std::int64_t i = 1; i <= count; ++i)
    rig.store->put_all({stored(Problem::square(800 + 8 * i), "tiled_t16_p0")});
  Options budgeted;
  budgeted.tune_budget_ms = 1500;
  rig.dispatcher->autotune(device(), Problem::square(800), budgeted);
  ASSERT_EQ(rig.tuner->searches.size(), 1u);
  EXPECT_EQ(rig.tuner->searches[0].second.size(), kHistoryEntries);
  EXPECT_EQ(rig.store->candidate_reads[800 + 8 * count], 0);  // the farthest
  EXPECT_EQ(rig.store->candidate_reads[800 + 8], 1);
}

// The info line that ends a tuning says when the budget ran out while candidates were still
// compiling, and what avoids that; otherwise it ends at the winner, also where the budget left
// candidates unscreened for want of time to time them. The level is read once per process: each
// runs in a child.
void tune_at_info_level(std::size_t unscreened, std::size_t still_compiling) {
  setenv("TILEMM_LOG", "info", 1);
  Rig rig;
  rig.tuner->unscreened = unscreened;
  rig.tuner->still_compiling = still_compiling;
  rig.gemm(kShape);
  std::exit(0);
}

TEST(DispatcherDeathTest, ATuningWhoseBudgetRanOutWhileCompilingSaysSoAtInfoLevel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(tune_at_info_level(90, 12), ::testing::ExitedWithCode(0),
              "tilemm: info: tuned 512x512x512 \\(a4-dense\\) in [0-9.]+ s: tiled_t16_p0; the "
              "budget ran out with 12 candidates still compiling and 90 of its selection "
              "unscreened \\(tilemm-tune --precompile compiles every variant once per machine\\)\n");
  EXPECT_EXIT(tune_at_info_level(90, 0), ::testing::ExitedWithCode(0),
              "tilemm: info: tuned 512x512x512 \\(a4-dense\\) in [0-9.]+ s: tiled_t16_p0\n");
}

}  // namespace
}  // namespace tilemm::dispatch
