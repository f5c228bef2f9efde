// The candidate-provider seam on the CPU, with a fake vendor provider: the tuner times its
// candidates beside the variants and picks one where it is fastest; vendor candidates are left
// out where a problem asks for own kernels only, or where no provider is available; stored vendor
// winners are refused where they cannot serve; cuBLASLt's and cuBLAS's names are canonical keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "candidate_provider.hpp"
#include "cublas_library.hpp"
#include "cublas_provider.hpp"
#include "cublaslt_names.hpp"
#include "fake_bench.hpp"
#include "fake_vendor_provider.hpp"
#include "provenance.hpp"
#include "provider_candidates.hpp"
#include "row_split.hpp"
#include "sample_entry.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tuner.hpp"
#include "tuning_json.hpp"

namespace tilemm::tuner {
namespace {

using testing::FakeVendorProvider;

// The fake bench, which also runs providers' candidates: scripted by name like variants.
class ProviderBench : public testing::FakeBench {
 public:
  bool runs_prepared() const override { return true; }
  CheckResult verify_prepared(const std::string& name, const Launcher& launch) override {
    launch(GemmArgs{}, nullptr);
    const auto it = check.find(name);
    return it == check.end() ? CheckResult{} : it->second;
  }
  TimingResult time_prepared(const std::string& name, const Launcher&, const TimingPlan& plan,
                             double give_up_ms) override {
    ++timings[name];
    if (plan.target_ms < timing_plan().target_ms) ++screenings[name];
    const double m = median.count(name) ? median.at(name) : 10.0;
    TimingResult r;
    r.stats = {m, m * 0.9, 0.02, 30};
    r.pruned = m > give_up_ms;
    return r;
  }
  std::map<std::string, int> timings, screenings;  // time_prepared calls, and those with a short plan
};

TuneSettings with_provider(detail::CandidateProvider* provider) {
  TuneSettings s;
  s.compile = testing::fake_compile;
  s.compile_threads = 2;
  s.space = {parse_variant("tiled_t16_p0"), parse_variant("tiled_t32_p0")};
  s.providers = std::vector<detail::CandidateProvider*>{provider};
  return s;
}

const CandidateResult* find(const TuneOutcome& out, const std::string& name) {
  for (const auto& c : out.candidates)
    if (c.variant == name) return &c;
  return nullptr;
}

TEST(CandidateProvider, TheTunerPicksAVendorCandidateWhereItIsFastest) {
  FakeVendorProvider fake;
  ProviderBench bench;
  bench.median = {{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 3.0}, {"fakevendor_a1", 1.5},
                  {"fakevendor_a2", 2.5}};
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, with_provider(&fake));
  EXPECT_EQ(out.winner, "fakevendor_a1");
  EXPECT_DOUBLE_EQ(out.median_ms, 1.5);
  EXPECT_DOUBLE_EQ(out.margin, 2.0 / 1.5 - 1.0);
  EXPECT_EQ(fake.listed, 1);
  EXPECT_GE(fake.prepared.enqueued, 2);  // each verified through its prepared launch
  ASSERT_NE(find(out, "fakevendor_a2"), nullptr);
  EXPECT_EQ(find(out, "fakevendor_a2")->status, CandidateStatus::ok);
}

// Under a budget a provider's candidates cost a screening each, not a full timing each: all are
// verified and screened with the short plan, the fastest kProviderFinalists are timed in full and
// compete, the others are pruned. The exhaustive search times every one in full.
TEST(CandidateProvider, UnderABudgetOnlyTheFastestScreenedAreTimedInFull) {
  FakeVendorProvider fake;
  fake.names = {"fakevendor_a1", "fakevendor_a2", "fakevendor_a3", "fakevendor_a4", "fakevendor_a5"};
  ProviderBench bench;
  bench.median = {{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 3.0}, {"fakevendor_a1", 4.0},
                  {"fakevendor_a2", 1.5}, {"fakevendor_a3", 5.0}, {"fakevendor_a4", 1.8},
                  {"fakevendor_a5", 6.0}};
  TuneSettings budgeted = with_provider(&fake);
  budgeted.budget_ms = 500;
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, budgeted);
  EXPECT_EQ(out.winner, "fakevendor_a2");
  ASSERT_EQ(kProviderFinalists, 2u);
  for (const auto& name : fake.names) {
    SCOPED_TRACE(name);
    EXPECT_EQ(bench.screenings[name], 1);
    const bool finalist = name == "fakevendor_a2" || name == "fakevendor_a4";
    EXPECT_EQ(bench.timings[name], finalist ? 2 : 1);
    ASSERT_NE(find(out, name), nullptr);
    EXPECT_EQ(find(out, name)->status, finalist ? CandidateStatus::ok : CandidateStatus::pruned);
  }
  EXPECT_NE(find(out, "fakevendor_a1")->reason.find("dropped after the screening"), std::string::npos);

  ProviderBench full_bench;
  full_bench.median = bench.median;
  const auto all = tune(testing::synthetic_h200(), Problem::square(512), full_bench, with_provider(&fake));
  for (const auto& name : fake.names) {
    EXPECT_EQ(full_bench.timings[name], 1) << name;
    EXPECT_EQ(full_bench.screenings[name], 0) << name;
    EXPECT_EQ(find(all, name)->status, CandidateStatus::ok) << name;
  }
}

TEST(CandidateProvider, AVariantWinsWhereItIsFasterAndWrongVendorResultsNeverWin) {
  FakeVendorProvider fake;
  fake.unavailable = "fakevendor_a2";
  ProviderBench bench;
  bench.median = {{"tiled_t16_p0", 2.0}, {"fakevendor_a1", 0.5}, {"fakevendor_a2", 0.1}};
  bench.check["fakevendor_a1"] = {CandidateStatus::wrong_result, "3 elements outside the bound"};
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, with_provider(&fake));
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  EXPECT_EQ(find(out, "fakevendor_a1")->status, CandidateStatus::wrong_result);
  EXPECT_EQ(find(out, "fakevendor_a2")->status, CandidateStatus::cannot_run);
  EXPECT_EQ(find(out, "fakevendor_a2")->reason, "not in this fake library");
}

// A search finds a candidate's provider by its whole prefix, in whatever order it lists them: a
// prefix that begins another's ("fakevendor", "fakevendorlt", as "cublas" and "cublaslt") never
// claims the other's candidates.
TEST(CandidateProvider, ACandidateGoesToTheProviderWhosePrefixItsNameHasWhole) {
  FakeVendorProvider short_prefix;
  FakeVendorProvider long_prefix("fakevendorlt");
  const Problem problem = Problem::square(512);
  for (const bool short_first : {true, false}) {
    SCOPED_TRACE(short_first ? "fakevendor listed first" : "fakevendorlt listed first");
    TuneSettings s;
    s.providers = short_first
                      ? std::vector<detail::CandidateProvider*>{&short_prefix, &long_prefix}
                      : std::vector<detail::CandidateProvider*>{&long_prefix, &short_prefix};
    EXPECT_EQ(provider_in_search(problem, s, "fakevendorlt_a1"), &long_prefix);
    EXPECT_EQ(provider_in_search(problem, s, "fakevendor_a1"), &short_prefix);
    EXPECT_EQ(provider_in_search(problem, s, "fakevendorltx_a1"), nullptr);
    EXPECT_EQ(provider_in_search(problem, s, "tiled_t16_p0"), nullptr);
  }
  EXPECT_EQ(detail::name_prefix("cublaslt_v130100_m0_a1"), "cublaslt");
  EXPECT_EQ(detail::name_prefix("naive"), "naive");
}

TEST(CandidateProvider, VendorOffLeavesVendorCandidatesOut) {
  FakeVendorProvider fake;
  ProviderBench bench;
  bench.median = {{"tiled_t16_p0", 2.0}, {"fakevendor_a1", 0.5}};
  Problem own_only = Problem::square(512);
  own_only.vendor = false;
  const auto out = tune(testing::synthetic_h200(), own_only, bench, with_provider(&fake));
  EXPECT_EQ(out.winner, "tiled_t16_p0");
  EXPECT_EQ(fake.listed, 0);
  EXPECT_EQ(find(out, "fakevendor_a1"), nullptr);
}

TEST(CandidateProvider, WithoutAnyProviderTheFamiliesAloneServe) {
  ProviderBench bench;
  bench.median = {{"tiled_t16_p0", 2.0}, {"tiled_t32_p0", 1.0}};
  TuneSettings s = with_provider(nullptr);
  s.providers = std::vector<detail::CandidateProvider*>{};  // a machine without cuBLASLt
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, s);
  EXPECT_EQ(out.winner, "tiled_t32_p0");
  EXPECT_EQ(out.winner_binary.name, "tiled_t32_p0");
}

TEST(CandidateProvider, ABenchOfVariantsAloneIsNeverGivenProviderCandidates) {
  FakeVendorProvider fake;
  testing::FakeBench bench;  // runs_prepared() is false
  const auto out = tune(testing::synthetic_h200(), Problem::square(512), bench, with_provider(&fake));
  EXPECT_EQ(fake.listed, 0);
  EXPECT_EQ(find(out, "fakevendor_a1"), nullptr);
}

// The registry, the name check of JSON import and the dispatcher's usability rule ask the
// registered provider: a stored vendor winner is served only where vendor candidates are on.
class RegisteredFake : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fake = std::make_unique<FakeVendorProvider>();
    provider = fake.get();
    detail::register_candidate_provider(std::move(fake));
  }
  void TearDown() override { detail::unregister_candidate_provider("fakevendor"); }
  FakeVendorProvider* provider = nullptr;
};

TEST_F(RegisteredFake, AStoredVendorWinnerServesOnlyWhereVendorCandidatesAreOn) {
  const DeviceInfo device = testing::synthetic_h200();
  Problem problem = Problem::square(512);
  EXPECT_EQ(detail::provider_of("fakevendor_a1"), provider);
  EXPECT_EQ(detail::provider_of("tiled_t16_p0"), nullptr);
  EXPECT_EQ(dispatch::why_unusable("fakevendor_a1", device, problem), "");
  problem.vendor = false;
  EXPECT_NE(dispatch::why_unusable("fakevendor_a1", device, problem).find("vendor candidates are off"),
            std::string::npos);
  problem.vendor = true;
  provider->unavailable = "fakevendor_a1";  // another library version, say
  EXPECT_NE(dispatch::why_unusable("fakevendor_a1", device, problem).find("not in this fake library"),
            std::string::npos);
}

TEST_F(RegisteredFake, TheRegistryRefusesAPrefixThatIsTakenOrAFamilysName) {
  EXPECT_THROW(detail::register_candidate_provider(std::make_unique<FakeVendorProvider>()), Error);
  class Tiled : public FakeVendorProvider {
    std::string prefix() const override { return "tiled"; }
  };
  EXPECT_THROW(detail::register_candidate_provider(std::make_unique<Tiled>()), Error);
}

cache::StoredEntry entry_with_winner(const std::string& winner) {
  cache::StoredEntry e = testing::sample_entry(88, 24, 5367, winner);
  e.problem_class = "a1-dense";
  return e;
}

TEST(CublasLtNames, EveryFieldRoundTripsAndNamesAreCanonical) {
  detail::CublasLtConfig c;
  c.version = 130100;
  c.compute = 1;
  c.algo = 66;
  c.tile = 20;
  c.stages = 35;
  c.split_k = 4;
  c.reduction = 2;
  c.swizzle = 1;
  c.custom = 3;
  c.inner = 7;
  c.cluster = 2;
  const std::string name = detail::cublaslt_name(c);
  EXPECT_EQ(name, "cublaslt_v130100_m1_a66_t20_s35_k4_r2_w1_c3_i7_l2");
  std::string why;
  const auto parsed = detail::parse_cublaslt_name(name, why);
  ASSERT_TRUE(parsed) << why;
  EXPECT_TRUE(*parsed == c);
  EXPECT_EQ(detail::cublaslt_precision(*parsed), Precision::medium);
  // cuBLASLt reports some algorithms' split of K as -1: its name (kn1) round-trips too.
  c.split_k = -1;
  const std::string negative = detail::cublaslt_name(c);
  EXPECT_EQ(negative, "cublaslt_v130100_m1_a66_t20_s35_kn1_r2_w1_c3_i7_l2");
  const auto back = detail::parse_cublaslt_name(negative, why);
  ASSERT_TRUE(back) << why;
  EXPECT_TRUE(*back == c);
  for (const char* bad : {"cublaslt_v130100_m1_a66_t20_s35_kn0_r2_w1_c3_i7_l2",  // minus zero
                          "cublaslt_v130100_m1_a66_t20_s35_knn1_r2_w1_c3_i7_l2",
                          "cublaslt_v130100_m1_a66_t20_s35_k-1_r2_w1_c3_i7_l2",  // not [a-z0-9_]
                          "cublaslt_vn130100_m1_a66_t20_s35_k4_r2_w1_c3_i7_l2",  // a version < 0
                          "cublaslt_v130100_mn1_a66_t20_s35_k4_r2_w1_c3_i7_l2","cublaslt_v130100_m2_a66_t20_s35_k4_r2_w1_c3_i7_l2",   // compute type
                          "cublaslt_v130100_m1_a066_t20_s35_k4_r2_w1_c3_i7_l2",  // leading zero
                          "cublaslt_v130100_m1_a66_t20_s35_k4_r2_w1_c3_i7",      // a field short
                          "cublaslt_v130100_m1_x66_t20_s35_k4_r2_w1_c3_i7_l2",   // wrong key
                          "cublaslt_v130100_m1_a66_t20_s35_k4_r2_w1_c3_i7_l2_z1"}) {
    EXPECT_FALSE(detail::parse_cublaslt_name(bad, why)) << bad;
    EXPECT_FALSE(why.empty());
  }
}

TEST(CublasNames, RoundTripAndNamesAreCanonical) {
  for (const int math : {0, 1}) {
    const detail::CublasCall call{130100, math};
    const std::string name = detail::cublas_name(call);
    EXPECT_EQ(name, "cublas_v130100_m" + std::to_string(math));
    std::string why;
    const auto parsed = detail::parse_cublas_name(name, why);
    ASSERT_TRUE(parsed) << why;
    EXPECT_TRUE(*parsed == call);
    EXPECT_EQ(detail::cublas_precision(*parsed), math == 0 ? Precision::highest : Precision::medium);
    EXPECT_TRUE(detail::why_not_a_known_name(name, {64}).empty()) << name;
  }
  for (const char* bad : {"cublas_v130100_m2", "cublas_v130100_m01", "cublas_v0130100_m0",
                          "cublas_vn1_m0", "cublas_v130100", "cublas_v130100_m0_a1",
                          "cublas_x130100_m0", "cublas_v_m0", "cublas_v130100_m"}) {
    std::string why;
    EXPECT_FALSE(detail::parse_cublas_name(bad, why)) << bad;
    EXPECT_FALSE(why.empty());
    EXPECT_FALSE(detail::why_not_a_known_name(bad, {64}).empty()) << bad;
  }
}

TEST(CublasProvider, IsAVendorProviderAndRefusesWhatItCannotServe) {
  detail::CandidateProvider* p = detail::provider_of("cublas_v130100_m0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->prefix(), "cublas");
  EXPECT_TRUE(p->vendor());
  EXPECT_TRUE(detail::is_vendor_candidate("cublas_v130100_m0"));
  const DeviceInfo device = testing::synthetic_h200();
  Problem problem = Problem::dense(64, 64, 64, 4);
  // Another cuBLAS version's choice is never served (or none is, where cuBLAS does not load).
  EXPECT_FALSE(p->why_cannot_run("cublas_v1_m0", device, problem).empty());
  const detail::Cublas* blas = detail::cublas();
  if (blas == nullptr) GTEST_SKIP() << "cuBLAS could not be loaded here";
  const std::string fp32 = detail::cublas_name({blas->version, 0});
  const std::string tf32 = detail::cublas_name({blas->version, 1});
  EXPECT_EQ(p->why_cannot_run(fp32, device, problem), "");
  // TF32 is less accurate than highest and high ask; true FP32 serves every precision.
  EXPECT_NE(p->why_cannot_run(tf32, device, problem).find("less accurate"), std::string::npos);
  EXPECT_EQ(p->candidates(device, problem), std::vector<std::string>{fp32});
  problem.precision = Precision::medium;
  EXPECT_EQ(p->why_cannot_run(tf32, device, problem), "");
  EXPECT_EQ(p->candidates(device, problem), (std::vector<std::string>{tf32, fp32}));
  // cublasSgemm's sizes are int.
  const Problem huge = Problem::dense(1, std::int64_t{1} << 31, 1, 1);
  EXPECT_NE(p->why_cannot_run(fp32, device, huge).find("2^31"), std::string::npos);
  EXPECT_TRUE(p->candidates(device, huge).empty());
}

TEST(CublasLtNames, JsonCarriesAVendorWinnerAndImportRefusesACorruptOneNamingTheEntry) {
  const std::string good = "cublaslt_v130100_m0_a66_t20_s35_k4_r2_w1_c0_i0_l0";
  const auto back = cache::entries_from_json(cache::entries_to_json({entry_with_winner(good)}),
                                             detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].winner, good);
  EXPECT_EQ(back[0].candidates.at(0).variant, good);
  const std::string corrupt = "cublaslt_v130100_m0_a66_t20_s35_k4_r2_w1_c0_i0_lX";
  try {
    cache::entries_from_json(
        cache::entries_to_json({entry_with_winner(good), entry_with_winner(corrupt)}),
        detail::why_not_a_known_name);
    FAIL() << "a corrupt vendor winner was imported";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument().rfind("entries[1].", 0), 0u) << e.argument();
    EXPECT_NE(std::string(e.what()).find("cublaslt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tilemm::tuner
