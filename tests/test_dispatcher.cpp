// The dispatcher's logic on the CPU: a fake store, a fake tuner and a fake kernel loader stand in
// for SQLite, the GPU tuning and the CUDA runtime (src/dispatch/dispatcher.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "cublas_provider.hpp"
#include "cublaslt_provider.hpp"
#include "dispatcher.hpp"
#include "fake_vendor_provider.hpp"
#include "kernel_sources.hpp"
#include "provenance.hpp"
#include "row_split.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tuning_coordinator.hpp"

namespace tilemm::dispatch {
namespace {

using cache::StoredEntry;

DeviceInfo device() {
  DeviceInfo d = testing::synthetic_h200();
  d.nvrtc_version = 13000;
  d.driver_version = 13000;
  d.l2_bytes = 50 << 20;
  return d;
}

StoredEntry stored(const Problem& p, const std::string& winner, const std::string& source = "tuned") {
  StoredEntry e;
  e.precision = p.precision;
  e.device_key = device().model_key();
  e.M = p.M;
  e.N = p.N;
  e.K = p.K;
  e.problem_class = class_of(p);
  e.winner = winner;
  e.median_ms = 1.0;
  e.tuned_at = "2026-11-29T00:00:00Z";
  e.tilemm_version = "test";
  e.versions = running_versions(device(), p);
  e.arch = device().arch();
  e.source = source;
  CandidateResult c;
  c.variant = winner;
  c.stats.median_ms = 1.0;
  e.candidates = {c};
  return e;
}

// The SQLite cache, in a map. `fail` makes every call throw; `other_process` runs on each lease
// attempt that finds the lease held by someone else.
class FakeStore : public ResultStore {
 public:
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string, Precision,
                      cache::CandidateSet>,
           StoredEntry>
      entries;
  std::map<std::string, std::vector<char>> cubins;  // by variant
  bool shared = false;
  bool fail = false;
  int puts = 0;
  struct Lease {
    std::string owner;
    double expires_in = 0;  // seconds after it was taken: < 0 is expired
  };
  std::map<std::string, Lease> leases;
  std::function<void(FakeStore&)> other_process;
  std::function<void(FakeStore&)> before_lease;  // runs as a lease is asked for
  std::vector<std::string> lease_log;  // "take <owner>", "release <owner>"
  std::function<void(const FakeStore&)> before_destruction;  // what a test checks after its dispatcher

  ~FakeStore() override {
    if (before_destruction) before_destruction(*this);
  }

  void add(const StoredEntry& e) {
    entries[{e.M, e.N, e.K, e.problem_class, e.precision, e.candidate_set}] = e;
  }
  // The entry of p's key chosen from `set`.
  const StoredEntry* at(const Problem& p, cache::CandidateSet set) const {
    const auto it = entries.find({p.M, p.N, p.K, class_of(p), p.precision, set});
    return it == entries.end() ? nullptr : &it->second;
  }
  // The first entry of p's key a lookup for p asks for (sets_serving).
  const StoredEntry* at(const Problem& p) const {
    for (const cache::CandidateSet set : sets_serving(p))
      if (const StoredEntry* e = at(p, set)) return e;
    return nullptr;
  }

  std::optional<StoredEntry> find(const std::string& device_key, const Problem& p,
                                  const std::string& problem_class, cache::CandidateSet set,
                                  bool with_candidates) override {
    check();
    const auto it = entries.find({p.M, p.N, p.K, problem_class, p.precision, set});
    if (it == entries.end() || it->second.device_key != device_key) return std::nullopt;
    StoredEntry e = it->second;
    if (!with_candidates) e.candidates.clear();
    return e;
  }
  std::vector<StoredEntry> list(const std::string& device_key) override {
    check();
    std::vector<StoredEntry> out;
    for (const auto& [key, e] : entries)
      if (e.device_key == device_key) out.push_back(e);
    return out;
  }
  void put_all(const std::vector<StoredEntry>& all) override {
    check();
    ++puts;
    for (const auto& e : all) add(e);
  }
  bool loads_stored_code() override {
    check();
    return !shared;
  }
  std::optional<std::vector<char>> find_cubin(const std::string&, int, const std::string&,
                                              const std::string& variant) override {
    check();
    const auto it = cubins.find(variant);
    if (it == cubins.end()) return std::nullopt;
    return it->second;
  }
  void put_cubin(const detail::CompiledVariant& compiled, const std::string&, int) override {
    check();
    cubins[compiled.name] = compiled.cubin;
  }
  bool try_acquire_lease(const std::string& key, const std::string& owner, double ttl) override {
    check();
    if (before_lease) before_lease(*this);
    auto it = leases.find(key);
    if (it == leases.end() || it->second.owner == owner || it->second.expires_in < 0) {
      leases[key] = {owner, ttl};
      lease_log.push_back("take " + owner);
      return true;
    }
    if (other_process) other_process(*this);
    return false;
  }
  void release_lease(const std::string& key, const std::string& owner) override {
    check();
    if (leases.count(key) && leases[key].owner == owner) leases.erase(key);
    lease_log.push_back("release " + owner);
  }

 private:
  void check() const {
    if (fail) throw Error(ErrorKind::cache, "tilemm: the fake cache is broken");
  }
};

// Kernels "loaded" into this process; an image whose first byte is 'X' is rejected.
class FakeLoader : public KernelLoader {
 public:
  std::map<std::string, std::unique_ptr<detail::LoadedKernel>> loaded;
  std::vector<std::string> compiled;
  std::vector<std::string> loads;  // "<variant> from <first byte of the image>"

  const detail::LoadedKernel* find_loaded(const DeviceInfo&, const Variant& v) override {
    const auto it = loaded.find(variant_name(v));
    return it == loaded.end() ? nullptr : it->second.get();
  }
  const detail::LoadedKernel& load(const DeviceInfo&, const Variant& v,
                                   const std::vector<char>& cubin) override {
    const std::string name = variant_name(v);
    loads.push_back(name + " from " + std::string(1, cubin.empty() ? '?' : cubin[0]));
    if (cubin.empty() || cubin[0] == 'X') throw Error(ErrorKind::cuda, "tilemm: image rejected");
    auto& slot = loaded[name];
    if (!slot) {
      slot = std::make_unique<detail::LoadedKernel>();
      slot->variant = v;
    }
    return *slot;
  }
  detail::CompiledVariant compile(const Variant& v, const std::string& arch) override {
    compiled.push_back(variant_name(v));
    detail::CompiledVariant c;
    c.name = variant_name(v);
    c.arch = arch;
    c.template_hash = "h";
    c.cubin = {'C'};
    return c;
  }
};

// Tuning scripted by M: the winner of each shape (default tiled_t16_p0); a plan winner names its
// parts' winners in `part_winners`.
class FakeTuner : public ShapeTuner {
 public:
  std::map<std::int64_t, std::string> winners;
  std::map<std::int64_t, std::string> part_winners;
  std::vector<std::int64_t> tuned;  // M of each tuning
  std::vector<bool> vendor;         // and its Problem::vendor
  std::vector<std::map<std::int64_t, std::string>> known;  // the known parts of each
  // The FP32 results' winners each was given (TuneRequest::highest_winner, highest_part_winners).
  std::vector<std::string> highest;
  std::vector<std::map<std::int64_t, std::string>> highest_parts;
  // Candidates each tuning gets a CUBIN for through the request's compiler, and what it got:
  // "<variant> <first byte of the image>".
  std::vector<std::string> candidates;
  std::vector<std::string> binaries;
  // The budget and the measured shapes each tuning was given.
  std::vector<std::pair<double, std::vector<tuner::MeasuredShape>>> searches;
  std::function<void(const TuneRequest&)> during;  // runs in each tuning; may block or throw

  tuner::ShapeTuning tune(const DeviceInfo&, const Problem& problem,
                          const TuneRequest& request) override {
    tuned.push_back(problem.M);
    vendor.push_back(problem.vendor);
    if (during) during(request);
    for (const auto& name : candidates) {
      const auto binary = request.compile(parse_variant(name), "sm_90");
      binaries.push_back(name + " " + std::string(1, binary.cubin.empty() ? '?' : binary.cubin[0]));
    }
    known.push_back(request.known_part_winners);
    highest.push_back(request.highest_winner);
    highest_parts.push_back(request.highest_part_winners);
    searches.push_back({request.budget_ms, request.history});
    tuner::ShapeTuning t;
    t.outcome = outcome(winners.count(problem.M) ? winners.at(problem.M) : "tiled_t16_p0");
    if (const auto rows = detail::parse_row_split(t.outcome.winner))
      for (const std::int64_t part : {*rows, problem.M - *rows})
        if (!request.known_part_winners.count(part))
          t.parts.push_back({detail::rows_of(problem, part), outcome(part_winners.at(part))});
    return t;
  }

 private:
  static tuner::TuneOutcome outcome(const std::string& winner) {
    tuner::TuneOutcome o;
    o.winner = winner;
    o.median_ms = 2.0;
    CandidateResult c;
    c.variant = winner;
    c.stats.median_ms = 2.0;
    o.candidates = {c};
    o.winner_binary.name = winner;
    o.winner_binary.cubin = {'T'};
    o.seconds = 0.5;
    return o;
  }
};

const std::vector<StoredEntry> kNoPreloaded;

struct Rig {
  FakeStore* store;
  FakeLoader* loader;
  FakeTuner* tuner;
  std::vector<StoredEntry> preloaded;
  std::vector<StoredEntry> preloaded_headers;  // the same without candidates
  int preloaded_reads = 0;  // how often the dispatcher asked for the preloaded results
  int header_reads = 0;     // and for them without candidates
  std::unique_ptr<Dispatcher> dispatcher;

  explicit Rig(std::vector<StoredEntry> shipped = {}, LeaseTimes lease = {}) : preloaded(std::move(shipped)) {
    for (StoredEntry e : preloaded) {
      e.candidates.clear();
      preloaded_headers.push_back(std::move(e));
    }
    Collaborators parts;
    auto s = std::make_unique<FakeStore>();
    auto l = std::make_unique<FakeLoader>();
    auto t = std::make_unique<FakeTuner>();
    store = s.get();
    loader = l.get();
    tuner = t.get();
    parts.store = std::move(s);
    parts.loader = std::move(l);
    parts.tuner = std::move(t);
    parts.preloaded = [this]() -> const std::vector<StoredEntry>& {
      ++preloaded_reads;
      return preloaded;
    };
    parts.preloaded_headers = [this]() -> const std::vector<StoredEntry>& {
      ++header_reads;
      return preloaded_headers;
    };
    parts.lease_owner = "host:1";
    parts.lease = lease;
    dispatcher = std::make_unique<Dispatcher>(std::move(parts));
  }

  // gemm()'s path: the memo, else resolve.
  Decision gemm(const Problem& p, TunePolicy policy = TunePolicy::tune_on_miss) {
    Options options;
    options.policy = policy;
    const ShapeKey key = key_of(device().ordinal, p);
    auto d = dispatcher->find(key);
    if (!d || resolves_again(*d, policy)) d = dispatcher->resolve(device(), p, key, options);
    return *d;
  }
  AutotuneResult autotune(const Problem& p, TunePolicy policy = TunePolicy::tune_on_miss,
                          bool force = false) {
    Options options;
    options.policy = policy;
    options.force = force;
    return dispatcher->autotune(device(), p, options);
  }
};

std::string kernel_of(const Decision& d) {
  return d.kernel == nullptr ? "(none)" : variant_name(d.kernel->variant);
}

const Problem kShape = Problem::dense(512, 512, 512, 4);

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

// Compile once per machine: a tuning takes each candidate's CUBIN from the store when it is there,
// and stores what it compiles, so a later tuning of any shape (here or in another process with
// the same cache) compiles nothing it compiled before. A shared store serves and keeps none.
TEST(Dispatcher, ATuningCompilesOnlyTheCandidatesTheStoreLacksAndStoresThem) {
  Rig rig;
  rig.tuner->candidates = {"tiled_t8_p0", "tiled_t32_p1"};
  rig.store->cubins["tiled_t8_p0"] = {'S'};
  rig.gemm(kShape);
  EXPECT_EQ(rig.tuner->binaries, (std::vector<std::string>{"tiled_t8_p0 S", "tiled_t32_p1 C"}));
  EXPECT_EQ(rig.loader->compiled, std::vector<std::string>{"tiled_t32_p1"});
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
           {kShape, "warptile_of_a_newer_build"}, {planned, "rowsplit_h5000"}}) {
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
  EXPECT_EQ(rig.tuner->searches[1].first, 0);
  EXPECT_TRUE(rig.tuner->searches[1].second.empty());  // the exhaustive search ranks nothing
}

}  // namespace
}  // namespace tilemm::dispatch

namespace tilemm::dispatch {
namespace {

// --- TunePolicy::background -------------------------------------------------------------------

// A door the fake tuner waits at, opened by the test; `reached` says a tuning is waiting there.
class Door {
 public:
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  // Called by the tuning: waits until the door opens or `stop` says stop (checked every ms),
  // for at most 20 s, so that a broken stop fails the test instead of hanging it.
  void wait(const std::function<bool()>& stop = {}) {
    std::unique_lock<std::mutex> lock(mutex_);
    reached_ = true;
    changed_.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!open_ && !(stop && stop()) && std::chrono::steady_clock::now() < deadline)
      changed_.wait_for(lock, std::chrono::milliseconds(1));
  }
  void wait_until_reached() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return reached_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  bool reached_ = false;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(Background, TheFirstCallRunsTheFallbackAtOnceAndLaterCallsTheWinnerOnceStored) {
  Rig rig;
  rig.tuner->winners[512] = "tiled_t32_p1";
  Door door;
  rig.tuner->during = [&](const TuneRequest&) { door.wait(); };
  const Decision first = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(first.fallback);
  EXPECT_TRUE(first.queued);
  EXPECT_EQ(kernel_of(first), variant_name(default_variant()));  // nothing tuned near it
  door.wait_until_reached();  // the worker is tuning the shape, and the caller goes on
  const Decision during_tuning = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(during_tuning.fallback);
  EXPECT_EQ(kernel_of(during_tuning), variant_name(default_variant()));
  door.open();
  rig.dispatcher->wait_for_background_tunings();
  const Decision tuned = rig.gemm(kShape, TunePolicy::background);
  EXPECT_FALSE(tuned.fallback);
  EXPECT_EQ(kernel_of(tuned), "tiled_t32_p1");
  ASSERT_NE(rig.store->at(kShape), nullptr);
  EXPECT_EQ(rig.store->at(kShape)->winner, "tiled_t32_p1");
  EXPECT_EQ(rig.tuner->tuned, std::vector<std::int64_t>{512});
  // Under its own name, so that a tune_on_miss caller of this process waits for its result.
  EXPECT_EQ(rig.store->lease_log,
            (std::vector<std::string>{"take host:1 background", "release host:1 background"}));
}

// autotune() under background answers at once too (the fallback, queued), and neither it nor
// gemm() queues a shape that is queued or being tuned.
TEST(Background, AShapeQueuedOrBeingTunedIsTunedOnceAndAutotuneDoesNotWaitForIt) {
  Rig rig;
  Door door;
  rig.tuner->during = [&](const TuneRequest&) { door.wait(); };
  const Problem other = Problem::dense(256, 512, 512, 4);
  rig.gemm(kShape, TunePolicy::background);
  door.wait_until_reached();
  rig.gemm(other, TunePolicy::background);  // queued behind kShape: one worker per device
  for (int i = 0; i < 3; ++i) {
    const AutotuneResult r = rig.autotune(kShape, TunePolicy::background);
    EXPECT_EQ(r.source, ResultSource::fallback);
    EXPECT_EQ(rig.autotune(other, TunePolicy::background).source, ResultSource::fallback);
    rig.gemm(kShape, TunePolicy::background);
    rig.gemm(other, TunePolicy::background);
  }
  door.open();
  rig.dispatcher->wait_for_background_tunings();
  EXPECT_EQ(rig.tuner->tuned, (std::vector<std::int64_t>{512, 256}));
  EXPECT_EQ(rig.autotune(other, TunePolicy::background).source, ResultSource::cache);
  EXPECT_FALSE(rig.gemm(other, TunePolicy::background).fallback);
}

// Another process holds the shape's lease: the worker waits for its result (and tunes nothing)
// while the callers keep running the fallback.
TEST(Background, TheWorkerWaitsForAnotherProcessesLeaseWithoutHoldingTheCallers) {
  Rig rig({}, LeaseTimes{300.0, 600.0, std::chrono::milliseconds(1)});
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  rig.store->leases[key] = {"host:2", 300.0};
  Door other_process_done;
  rig.store->other_process = [&](FakeStore& s) {
    other_process_done.wait();  // the worker is blocked here, in the lease loop, until ...
    s.add(stored(kShape, "tiled_t32_p0"));
    s.leases.erase(key);
  };
  rig.gemm(kShape, TunePolicy::background);
  other_process_done.wait_until_reached();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(rig.gemm(kShape, TunePolicy::background).fallback);
  EXPECT_LT(seconds_since(start), 1.0);  // no caller waited for the lease
  other_process_done.open();  // ... the other process stores its result and releases the lease
  rig.dispatcher->wait_for_background_tunings();
  EXPECT_EQ(kernel_of(rig.gemm(kShape, TunePolicy::background)), "tiled_t32_p0");
  EXPECT_TRUE(rig.tuner->tuned.empty());
}

TEST(Background, ATuningThatThrowsLeavesTheFallbackInPlaceAndSaysSo) {
  Rig rig;
  rig.tuner->during = [](const TuneRequest&) {
    throw Error(ErrorKind::internal, "tilemm: tuning found no correct candidate");
  };
  ::testing::internal::CaptureStderr();
  rig.gemm(kShape, TunePolicy::background);
  rig.dispatcher->wait_for_background_tunings();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("background tuning of 512x512x512 (a4-dense) failed"), std::string::npos)
      << said;
  const Decision after = rig.gemm(kShape, TunePolicy::background);
  EXPECT_TRUE(after.fallback);
  EXPECT_EQ(kernel_of(after), variant_name(default_variant()));
  EXPECT_EQ(rig.store->puts, 0);
  EXPECT_TRUE(rig.store->leases.empty());
  EXPECT_EQ(rig.tuner->tuned.size(), 1u);  // background calls do not queue it again ...
  rig.tuner->during = nullptr;
  EXPECT_FALSE(rig.gemm(kShape, TunePolicy::tune_on_miss).fallback);  // ... a tuning call tunes
  EXPECT_EQ(rig.tuner->tuned.size(), 2u);
}

// The dispatcher goes away (at exit, the process's stops the same way) while a tuning runs:
// the tuning hears it, nothing of it is stored, its lease is released, and nothing hangs.
TEST(Background, StoppingMidTuningStoresNothingReleasesTheLeaseAndDoesNotHang) {
  Rig rig;
  Door never_opened;
  bool heard_stop = false;
  rig.tuner->during = [&](const TuneRequest& request) {
    const auto* hooks = request.hooks;
    ASSERT_NE(hooks, nullptr);
    never_opened.wait([&] { return heard_stop = hooks->stop_requested(); });
  };
  int puts = -1;
  std::vector<std::string> lease_log;
  std::size_t leases_held = 99;
  rig.store->before_destruction = [&](const FakeStore& s) {
    puts = s.puts;
    lease_log = s.lease_log;
    leases_held = s.leases.size();
  };
  rig.gemm(kShape, TunePolicy::background);
  never_opened.wait_until_reached();
  const auto start = std::chrono::steady_clock::now();
  rig.dispatcher.reset();
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_TRUE(heard_stop);
  EXPECT_EQ(puts, 0);
  EXPECT_EQ(leases_held, 0u);
  EXPECT_EQ(lease_log,
            (std::vector<std::string>{"take host:1 background", "release host:1 background"}));
}

// Stopping also ends a wait for another process's lease, which may last max_wait_seconds.
TEST(Background, StoppingEndsAWaitForAnotherProcessesLease) {
  // A wait bounded at 30 s: a stop that is not heard fails the test below instead of hanging it.
  Rig rig({}, LeaseTimes{300.0, 30.0, std::chrono::milliseconds(1)});
  const std::string key = device().model_key() + "|512x512x512 (a4-dense)";
  rig.store->leases[key] = {"host:2", 300.0};  // held, never released
  Door waiting;
  rig.store->other_process = [&](FakeStore&) { waiting.open(); };
  rig.gemm(kShape, TunePolicy::background);
  waiting.wait();  // the worker found the lease held at least once
  const auto start = std::chrono::steady_clock::now();
  rig.dispatcher.reset();
  EXPECT_LT(seconds_since(start), 5.0);
}

}  // namespace
}  // namespace tilemm::dispatch
