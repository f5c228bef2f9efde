// The dispatcher with vendor candidates, on the CPU (a fake vendor provider): which stored
// results serve callers that allow vendor candidates and those that ask for own kernels only,
// and what is stored where no vendor library is available.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "cublas_provider.hpp"
#include "cublaslt_provider.hpp"
#include "dispatcher_rig.hpp"
#include "fake_vendor_provider.hpp"

namespace tilemm::dispatch {
namespace {

using namespace rig;  // NOLINT(google-build-using-namespace): the fakes every test here uses

// The vendor providers of a test: the fake one, available or not, and, for a process without
// any vendor library, cuBLASLt and cuBLAS taken away (whether the machine running the tests has
// them or not) and put back after.
struct VendorProviders {
  explicit VendorProviders(bool available = true, bool without_vendor_libraries = false)
      : without_vendor_libraries_(without_vendor_libraries) {
    auto made = std::make_unique<testing::FakeVendorProvider>();
    made->present = available;
    fake = made.get();
    detail::register_candidate_provider(std::move(made));
    if (without_vendor_libraries_) {
      detail::unregister_candidate_provider("cublaslt");
      detail::unregister_candidate_provider("cublas");
    }
  }
  ~VendorProviders() {
    detail::unregister_candidate_provider("fakevendor");
    if (without_vendor_libraries_) {
      detail::register_candidate_provider(detail::make_cublaslt_provider());
      detail::register_candidate_provider(detail::make_cublas_provider());
    }
  }
  VendorProviders(const VendorProviders&) = delete;
  VendorProviders& operator=(const VendorProviders&) = delete;
  testing::FakeVendorProvider* fake = nullptr;

 private:
  bool without_vendor_libraries_;
};

Problem own_only(Problem p) {
  p.vendor = false;
  return p;
}

StoredEntry stored_own_only(const Problem& p, const std::string& winner) {
  StoredEntry e = stored(p, winner);
  e.candidate_set = cache::CandidateSet::own_only;
  return e;
}

// A result tuned with own kernels only, stored first, is no answer for a caller that allows
// vendor candidates: it might miss a faster vendor candidate. That caller tunes with them and
// stores its result beside the other, which stays for the callers of own kernels only.
TEST(Dispatcher, AnOwnOnlyResultIsAMissForACallerWithVendorCandidates) {
  VendorProviders vendors;
  Rig rig;
  rig.store->add(stored_own_only(kShape, "tiled_t32_p0"));
  rig.tuner->winners[kShape.M] = "fakevendor_a1";
  const AutotuneResult r = rig.autotune(kShape);
  EXPECT_EQ(r.source, ResultSource::tuned);
  EXPECT_EQ(r.winner, "fakevendor_a1");
  EXPECT_EQ(rig.tuner->vendor, std::vector<bool>{true});
  ASSERT_NE(rig.store->at(kShape, cache::CandidateSet::with_vendor), nullptr);
  EXPECT_EQ(rig.store->at(kShape, cache::CandidateSet::with_vendor)->winner, "fakevendor_a1");
  ASSERT_NE(rig.store->at(kShape, cache::CandidateSet::own_only), nullptr);
  EXPECT_EQ(rig.store->at(kShape, cache::CandidateSet::own_only)->winner, "tiled_t32_p0");

  // Both are served from the cache now, each to its own callers.
  EXPECT_EQ(rig.autotune(kShape).source, ResultSource::cache);
  const AutotuneResult own = rig.autotune(own_only(kShape));
  EXPECT_EQ(own.source, ResultSource::cache);
  EXPECT_EQ(own.winner, "tiled_t32_p0");
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);
}

// A stored vendor winner cannot serve a process of own kernels only: it tunes once, and its
// result is stored beside the vendor winner (which stays), so that the next such process on the
// same cache is served with no tuning.
TEST(Dispatcher, AnOwnOnlyTuningBesideAVendorWinnerIsStoredForTheNextProcess) {
  VendorProviders vendors;
  Rig first;
  first.store->add(stored(kShape, "fakevendor_a1"));
  const AutotuneResult tuned = first.autotune(own_only(kShape));
  EXPECT_EQ(tuned.source, ResultSource::tuned);
  EXPECT_EQ(tuned.winner, "tiled_t16_p0");
  EXPECT_EQ(first.tuner->vendor, std::vector<bool>{false});
  ASSERT_NE(first.store->at(kShape, cache::CandidateSet::own_only), nullptr);
  EXPECT_EQ(first.store->at(kShape, cache::CandidateSet::own_only)->winner, "tiled_t16_p0");
  EXPECT_EQ(first.store->at(kShape, cache::CandidateSet::with_vendor)->winner, "fakevendor_a1");
  // The tuning's lease was its own: a tuning with vendor candidates of the shape takes another.
  EXPECT_NE(tuning_lease_key(device(), own_only(kShape)), tuning_lease_key(device(), kShape));

  Rig second;  // another process on the same cache file
  second.store->entries = first.store->entries;
  EXPECT_EQ(kernel_of(second.gemm(own_only(kShape))), "tiled_t16_p0");
  const AutotuneResult served = second.autotune(own_only(kShape));
  EXPECT_EQ(served.source, ResultSource::cache);
  EXPECT_EQ(served.winner, "tiled_t16_p0");
  const AutotuneResult vendor = second.autotune(kShape);
  EXPECT_EQ(vendor.source, ResultSource::cache);
  EXPECT_EQ(vendor.winner, "fakevendor_a1");
  EXPECT_TRUE(second.tuner->tuned.empty());
}

// A tuning with vendor candidates whose winner is an own kernel timed every own candidate too:
// it serves the callers of own kernels only with no tuning, from the cache and the preloaded
// results alike.
TEST(Dispatcher, AWithVendorResultWithAnOwnWinnerServesOwnOnlyCallers) {
  VendorProviders vendors;
  const Problem shipped = Problem::dense(640, 640, 640, 4);
  Rig rig({stored(shipped, "tiled_t8_p0", "preloaded")});
  rig.store->add(stored(kShape, "tiled_t32_p0"));
  const AutotuneResult cached = rig.autotune(own_only(kShape));
  EXPECT_EQ(cached.source, ResultSource::cache);
  EXPECT_EQ(cached.winner, "tiled_t32_p0");
  EXPECT_EQ(kernel_of(rig.gemm(own_only(kShape))), "tiled_t32_p0");
  const AutotuneResult preloaded = rig.autotune(own_only(shipped));
  EXPECT_EQ(preloaded.source, ResultSource::preloaded);
  EXPECT_EQ(preloaded.winner, "tiled_t8_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
  EXPECT_EQ(rig.store->puts, 0);
}

// A shipped vendor winner is no answer for own kernels only, as a cached one: the shape is
// tuned, and stored as own kernels only.
TEST(Dispatcher, APreloadedVendorWinnerIsAMissForOwnOnlyCallers) {
  VendorProviders vendors;
  Rig rig({stored(kShape, "fakevendor_a2", "preloaded")});
  EXPECT_EQ(rig.autotune(kShape).winner, "fakevendor_a2");
  const AutotuneResult own = rig.autotune(own_only(kShape));
  EXPECT_EQ(own.source, ResultSource::tuned);
  ASSERT_NE(rig.store->at(kShape, cache::CandidateSet::own_only), nullptr);
  EXPECT_EQ(rig.store->at(kShape, cache::CandidateSet::with_vendor), nullptr);
}

// Whether a vendor provider is available may cost loading its library: a process served an own
// winner from its cache or the preloaded results never asks, whatever its callers allow.
TEST(Dispatcher, AnOwnWinnerIsServedWithoutAskingWhetherAVendorLibraryIsThere) {
  VendorProviders vendors(true, true);  // the fake is the only vendor provider
  const Problem shipped = Problem::dense(640, 640, 640, 4);
  Rig rig({stored(shipped, "tiled_t8_p0", "preloaded")});
  rig.store->add(stored(kShape, "tiled_t32_p0"));
  EXPECT_EQ(kernel_of(rig.gemm(kShape)), "tiled_t32_p0");
  EXPECT_EQ(kernel_of(rig.gemm(own_only(kShape))), "tiled_t32_p0");
  EXPECT_EQ(kernel_of(rig.gemm(shipped)), "tiled_t8_p0");
  EXPECT_EQ(vendors.fake->availability_asked, 0);
  // A miss asks: what it tunes with, and the set it stores under, depend on it.
  rig.gemm(Problem::dense(768, 768, 768, 4));
  EXPECT_GT(vendors.fake->availability_asked, 0);
}

// Where no vendor provider is available (no cuBLASLt in the process), a caller allowing vendor
// candidates chooses among own kernels only: its tuning is stored as such, and results of own
// kernels only serve it.
TEST(Dispatcher, WithoutAVendorLibraryATuningIsStoredAsOwnKernelsOnly) {
  VendorProviders vendors(false, true);
  EXPECT_EQ(candidate_set_of(kShape), cache::CandidateSet::own_only);
  Rig rig;
  EXPECT_EQ(rig.autotune(kShape).source, ResultSource::tuned);
  ASSERT_NE(rig.store->at(kShape, cache::CandidateSet::own_only), nullptr);
  EXPECT_EQ(rig.store->at(kShape, cache::CandidateSet::with_vendor), nullptr);
  const Problem other = Problem::dense(640, 640, 640, 4);
  rig.store->add(stored_own_only(other, "tiled_t32_p0"));
  EXPECT_EQ(rig.autotune(other).source, ResultSource::cache);
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);
}

// Under TunePolicy::background a caller never waits for a vendor library to load (no_wait.hpp):
// a cached vendor winner runs as a fallback while the worker loads and prepares it, with no
// tuning, and the calls after that run it. Once it is loaded, a shipped vendor winner is served
// to a background caller at once.
TEST(Dispatcher, UnderBackgroundTheWorkerLoadsTheLibraryOfACachedVendorWinner) {
  VendorProviders vendors(true, true);
  vendors.fake->must_load = true;
  const Problem shipped = Problem::dense(640, 640, 640, 4);
  Rig rig({stored(shipped, "fakevendor_a1", "preloaded")});
  rig.store->add(stored(kShape, "fakevendor_a2"));
  const Decision first = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(first.fallback);
  EXPECT_TRUE(first.queued);
  EXPECT_EQ(first.prepared, nullptr);
  EXPECT_EQ(kernel_of(first), variant_name(default_variant()));
  rig.dispatcher->wait_for_background_tunings();
  ASSERT_TRUE(vendors.fake->loaded);
  EXPECT_NE(vendors.fake->loaded_by, std::this_thread::get_id());
  // It ran once there too, so that its kernels are loaded before a caller launches it.
  ASSERT_EQ(rig.warm_ups.size(), 1u);
  EXPECT_EQ(rig.warm_ups[0].first, kShape.M);
  EXPECT_EQ(rig.warm_ups[0].second, vendors.fake->loaded_by);
  const Decision later = rig.gemm(kShape, TunePolicy::background);
  EXPECT_FALSE(later.fallback);
  EXPECT_EQ(later.prepared, &vendors.fake->prepared);
  const Decision served = rig.gemm(shipped, TunePolicy::background);
  EXPECT_FALSE(served.fallback);
  EXPECT_EQ(served.prepared, &vendors.fake->prepared);
  EXPECT_TRUE(rig.tuner->tuned.empty());
  EXPECT_EQ(rig.warm_ups.size(), 1u);
}

// A vendor library loaded and the algorithm prepared by a caller that may wait, but never run
// off the callers' threads: a background caller does not make the first launch either.
TEST(Dispatcher, UnderBackgroundAVendorWinnerNotRunYetRunsOnTheWorkerFirst) {
  VendorProviders vendors(true, true);
  Rig rig;
  rig.store->add(stored(kShape, "fakevendor_a2"));
  vendors.fake->prepare("fakevendor_a2", device());
  const Decision first = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(first.fallback);
  EXPECT_EQ(first.prepared, nullptr);
  rig.dispatcher->wait_for_background_tunings();
  ASSERT_EQ(rig.warm_ups.size(), 1u);
  EXPECT_NE(rig.warm_ups[0].second, std::this_thread::get_id());
  EXPECT_TRUE(vendors.fake->prepared.warmed());
  const Decision later = rig.gemm(kShape, TunePolicy::background);
  EXPECT_FALSE(later.fallback);
  EXPECT_EQ(later.prepared, &vendors.fake->prepared);
  EXPECT_TRUE(rig.tuner->tuned.empty());
}

// The same stored winner, for a caller that may wait (tune_on_miss): it loads the library itself
// and runs the winner from its first call.
TEST(Dispatcher, ACallerThatMayWaitLoadsTheLibraryOfACachedVendorWinnerItself) {
  VendorProviders vendors(true, true);
  vendors.fake->must_load = true;
  Rig rig;
  rig.store->add(stored(kShape, "fakevendor_a2"));
  const Decision first = rig.gemm(kShape);
  EXPECT_FALSE(first.fallback);
  EXPECT_EQ(first.prepared, &vendors.fake->prepared);
  EXPECT_EQ(vendors.fake->loaded_by, std::this_thread::get_id());
  EXPECT_TRUE(rig.tuner->tuned.empty());
}

// A plan's part whose winner is a vendor candidate runs once when the plan is made ready, as a
// shape's own winner does: the plan's callers run its parts from the memo.
TEST(Dispatcher, APlansVendorPartRunsOnceWhenThePlanIsMadeReady) {
  VendorProviders vendors(true, true);
  const Problem planned = Problem::dense(1100, 260, 300, 4);
  Rig rig;
  rig.tuner->winners[1100] = "rowsplit_h1024";
  rig.tuner->part_winners = {{1024, "fakevendor_a1"}, {76, "tiled_t8_p0"}};
  EXPECT_EQ(rig.autotune(planned).winner, "rowsplit_h1024");
  ASSERT_EQ(rig.warm_ups.size(), 1u);
  EXPECT_EQ(rig.warm_ups[0].first, 1024);
  EXPECT_TRUE(vendors.fake->prepared.warmed());
  const auto part = rig.dispatcher->find(key_of(0, detail::rows_of(planned, 1024)));
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->prepared, &vendors.fake->prepared);
}

}  // namespace
}  // namespace tilemm::dispatch
