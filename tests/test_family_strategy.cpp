// A family defined by a test alone, one template (tests/kernel_templates/sliced.cu) plus the
// definition below, goes through everything the library does with a family: it is enumerated
// and named, checked by can_run, compiled by NVRTC with its own definitions and extra kernel,
// pruned by its own hint in the tuner, and (on a GPU) loaded and launched with its own workspace
// and second kernel, although launch.cpp, kernel_library.cpp and tuner.cpp know nothing of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "family_launch.hpp"
#include "fake_bench.hpp"
#include "family_registry.hpp"
#include "gemm_check.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/gemm.hpp"
#include "tuner.hpp"

namespace tilemm::detail {
const std::vector<EmbeddedTemplate>& test_only_templates();  // generated from tests/kernel_templates
}

namespace tilemm {
namespace {

using detail::Family;
using detail::LaunchGeometry;
using detail::LaunchRequest;

// --- The family: everything sliced.cu needs, in one place ----------------------------------------

int slices(const Variant& v) { return v.param("s"); }

// The template's static_assert, with its message.
std::string check_sliced(const Variant& v) {
  if (v.param("t") % 32 != 0) return "SUM_THREADS must be a whole number of warps";
  return {};
}

// 16 x 16 threads per 16 x 16 tile of C, one block per slice along z.
LaunchGeometry sliced_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = detail::grid_over_c(p.M, p.N, 16, 16, 16, 16);
  g.grid_z64 = static_cast<std::uint64_t>(slices(v));
  g.grid[2] = static_cast<unsigned>(g.grid_z64);
  return g;
}

std::size_t no_shared_memory(const Variant&) { return 0; }

// The slices' dense M x N partial products; none for one slice, which writes C directly.
std::size_t partials_bytes(const Variant& v, const Problem& p, const DeviceInfo&) {
  if (slices(v) == 1) return 0;
  return static_cast<std::size_t>(slices(v)) * static_cast<std::size_t>(p.M) *
         static_cast<std::size_t>(p.N) * sizeof(float);
}

std::vector<std::string> sum_kernel(const Variant& v) {
  if (slices(v) == 1) return {};
  return {"_sum"};
}

// The partial products into the workspace, then <name>_sum with the variant's SUM_THREADS.
void enqueue_sliced(const LaunchRequest& r) {
  if (slices(r.variant) == 1) return detail::enqueue_gemm(r);
  GemmArgs partial = r.args;
  partial.alpha = 1.0f;
  partial.beta = 0.0f;
  partial.C = r.workspace;
  partial.ldc = r.args.N;
  detail::launch_gemm_kernel(r.kernels.gemm, sliced_geometry(r.variant, r.problem), partial,
                             r.stream);
  int M = static_cast<int>(r.args.M), N = static_cast<int>(r.args.N);
  const float* W = r.workspace;
  float alpha = r.args.alpha, beta = r.args.beta;
  float* C = r.args.C;
  long long ldc = r.args.ldc;
  void* params[] = {&M, &N, &W, &alpha, &beta, &C, &ldc};
  const auto threads = static_cast<std::int64_t>(r.variant.param("t"));
  LaunchGeometry g;
  g.block[0] = static_cast<unsigned>(threads);
  g.grid[0] = static_cast<unsigned>(std::min<std::int64_t>((M * std::int64_t{N} + threads - 1) / threads, 1024));
  detail::launch_kernel(r.kernels.extra_kernel("_sum"), g, params, r.stream);
}

std::string too_little_k_per_slice(const Variant& v, const DeviceInfo&, const Problem& p) {
  if (slices(v) > 1 && p.K < 64 * slices(v))
    return "K = " + std::to_string(p.K) + " is too short for " + std::to_string(slices(v)) +
           " slices of 64";
  return {};
}

Family sliced_family() {
  Family f;
  f.name = "sliced";
  f.template_file = "sliced.cu";
  f.params = {{"s", "SLICES", {1, 2, 4}}, {"t", "SUM_THREADS", {48, 64, 128}}};
  f.check_params = check_sliced;
  f.geometry = sliced_geometry;
  f.shared_bytes = no_shared_memory;
  f.workspace_bytes = partials_bytes;
  f.extra_definitions = {"-DPARTIALS_IN_WORKSPACE=1"};
  f.extra_kernels = sum_kernel;
  f.enqueue = enqueue_sliced;
  f.pruning_hint = too_little_k_per_slice;
  return f;
}

const bool registered = [] {
  for (const auto& t : detail::test_only_templates())
    if (t.file == "sliced.cu") {
      detail::register_extra_family(sliced_family(), t);
      return true;
    }
  return false;
}();

// --- What the library does with it -----------------------------------------------------------

const std::vector<std::string> kSlicedNames = {"sliced_s1_t64",  "sliced_s1_t128",
                                                "sliced_s2_t64",  "sliced_s2_t128",
                                                "sliced_s4_t64",  "sliced_s4_t128"};

std::vector<std::string> names_of(const std::vector<Variant>& space) {
  std::vector<std::string> names;
  for (const auto& v : space) names.push_back(variant_name(v));
  return names;
}

TEST(FamilyStrategy, ARegisteredFamilyComesAfterTheLibrarysOwn) {
  ASSERT_TRUE(registered) << "sliced.cu is not among the test-only templates";
  const auto names = family_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.back(), "sliced");
  EXPECT_EQ(names.front(), "naive");
}

// A family without a field that has no default, with a name that does not split, or with the
// name of another is refused before anything is registered.
TEST(FamilyStrategy, RegistrationRefusesAnIncompleteOrDuplicateFamily) {
  const detail::EmbeddedTemplate source{"unused.cu", "", ""};
  auto refused = [&](const Family& f, const std::string& why) {
    try {
      detail::register_extra_family(f, source);
      ADD_FAILURE() << "registered '" << f.name << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  Family f = sliced_family();
  f.name = "unfinished";
  f.geometry = nullptr;
  refused(f, "leaves a required function unset");
  f = sliced_family();
  f.name = "sliced_twice";
  refused(f, "needs a name without '_'");
  f = sliced_family();
  f.params[0].key = "s_";
  f.name = "badkey";
  refused(f, "has a parameter without a key");
  refused(sliced_family(), "already exists");
  EXPECT_EQ(family_names().back(), "sliced");
  EXPECT_THROW(detail::find_template("unused.cu"), Error);
}

TEST(FamilyStrategy, ItsSpaceIsEnumeratedNamedAndParsedFromItsDefinition) {
  EXPECT_EQ(names_of(variant_space("sliced")), kSlicedNames);
  const auto all = names_of(variant_space());
  ASSERT_GE(all.size(), kSlicedNames.size());
  EXPECT_TRUE(std::equal(kSlicedNames.begin(), kSlicedNames.end(), all.end() - static_cast<std::ptrdiff_t>(kSlicedNames.size())));
  for (const auto& name : kSlicedNames) EXPECT_EQ(variant_name(parse_variant(name)), name);
  // Its check_params rejects what its static_assert would.
  try {
    parse_variant("sliced_s2_t48");
    ADD_FAILURE() << "sliced_s2_t48 parsed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("SUM_THREADS must be a whole number of warps"),
              std::string::npos)
        << e.what();
  }
}

TEST(FamilyStrategy, CanRunUsesItsGeometryAndWorkspace) {
  auto device = testing::synthetic_h200();
  EXPECT_TRUE(can_run(parse_variant("sliced_s4_t64"), device, Problem::dense(1000, 1000, 1000, 1)).ok);
  // 4 slices of 12000^2 floats are 2197 MiB of workspace; one slice needs none.
  const Problem big = Problem::dense(12000, 12000, 64, 1);
  const Verdict split = can_run(parse_variant("sliced_s4_t64"), device, big);
  EXPECT_FALSE(split.ok);
  EXPECT_NE(split.reason.find("workspace of 2197 MiB exceeds the 1024 MiB limit"), std::string::npos)
      << split.reason;
  EXPECT_TRUE(can_run(parse_variant("sliced_s1_t64"), device, big).ok);
  // Its 16 x 16 blocks are 256 threads; 65535 rows of blocks cover 1048560 rows.
  device.max_threads_per_block = 128;
  const Verdict threads = can_run(parse_variant("sliced_s1_t64"), device, Problem::square(64));
  EXPECT_NE(threads.reason.find("256 threads per block exceed the device's 128"), std::string::npos)
      << threads.reason;
  device = testing::synthetic_h200();
  EXPECT_TRUE(can_run(parse_variant("sliced_s1_t64"), device, Problem::dense(1048560, 4, 4, 1)).ok);
  EXPECT_FALSE(can_run(parse_variant("sliced_s1_t64"), device, Problem::dense(1048561, 4, 4, 1)).ok);
}

// The section names of a CUBIN's kernels that start with `prefix`.
std::set<std::string> kernel_sections(const std::vector<char>& image, const std::string& prefix) {
  const std::string section = ".text." + prefix;
  std::set<std::string> found;
  for (auto it = image.begin();
       (it = std::search(it, image.end(), section.begin(), section.end())) != image.end(); ++it)
    found.insert(std::string(it + 6, std::find(it, image.end(), '\0')));
  return found;
}

TEST(FamilyStrategy, NvrtcCompilesItWithItsDefinitionsAndExtraKernel) {
  const Variant split = parse_variant("sliced_s2_t64");
  EXPECT_EQ(detail::compile_definitions(split),
            (std::vector<std::string>{"-DTILEMM_KERNEL_NAME=sliced_s2_t64", "-DSLICES=2",
                                      "-DSUM_THREADS=64", "-DPARTIALS_IN_WORKSPACE=1"}));
  const auto compiled = detail::compile_variant(split, "sm_90");
  EXPECT_EQ(kernel_sections(compiled.cubin, "sliced"),
            (std::set<std::string>{"sliced_s2_t64", "sliced_s2_t64_sum"}));
  EXPECT_EQ(kernel_sections(detail::compile_variant(parse_variant("sliced_s1_t128"), "sm_90").cubin,
                            "sliced"),
            (std::set<std::string>{"sliced_s1_t128"}));
}

TEST(FamilyStrategy, ItsStaticAssertIsTheRuleItsCheckMirrors) {
  const auto& tmpl = detail::find_template("sliced.cu");
  try {
    detail::compile_template(tmpl, "sliced_s2_t48", "sm_90",
                             {"-DTILEMM_KERNEL_NAME=sliced_s2_t48", "-DSLICES=2",
                              "-DSUM_THREADS=48", "-DPARTIALS_IN_WORKSPACE=1"});
    ADD_FAILURE() << "SUM_THREADS = 48 compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("SUM_THREADS must be a whole number of warps"), std::string::npos)
        << e.log();
  }
}

TEST(FamilyStrategy, TheBudgetedSearchPrunesItByItsOwnHint) {
  tuner::TuneSettings settings;
  settings.compile = testing::fake_compile;
  settings.compile_threads = 1;
  settings.space = variant_space("sliced");
  // Hints shape only a budgeted search: this one never runs out (the clock stands still).
  settings.budget_ms = 1e6;
  settings.now_ms = [] { return 0.0; };
  // K = 200: 2 slices of 64 fit, 4 do not.
  testing::FakeBench bench;  // every candidate correct, and as fast as every other
  const auto out = tuner::tune(testing::synthetic_h200(), Problem::dense(512, 512, 200, 4), bench,
                               settings);
  // Pruned without a timing: by the hint (the others may be dropped by successive halving).
  const std::set<std::string> timed(bench.timed.begin(), bench.timed.end());
  std::set<std::string> pruned;
  for (const auto& c : out.candidates)
    if (c.status == CandidateStatus::pruned && !timed.count(c.variant)) {
      pruned.insert(c.variant);
      EXPECT_EQ(c.reason, "K = 200 is too short for 4 slices of 64") << c.variant;
    }
  EXPECT_EQ(pruned, (std::set<std::string>{"sliced_s4_t64", "sliced_s4_t128"}));
  EXPECT_EQ(timed, (std::set<std::string>{"sliced_s1_t64", "sliced_s1_t128", "sliced_s2_t64",
                                          "sliced_s2_t128"}));
  // With enough K nothing is pruned.
  testing::FakeBench long_k;
  tuner::tune(testing::synthetic_h200(), Problem::dense(512, 512, 4096, 4), long_k, settings);
  EXPECT_EQ(std::set<std::string>(long_k.timed.begin(), long_k.timed.end()).size(),
            kSlicedNames.size());
  // The exhaustive search times every candidate, the hint's too.
  settings.budget_ms = 0;
  testing::FakeBench exhaustive;
  tuner::tune(testing::synthetic_h200(), Problem::dense(512, 512, 200, 4), exhaustive, settings);
  EXPECT_EQ(exhaustive.timed.size(), kSlicedNames.size());
}

// On a GPU: run_variant loads the module's extra kernel and launch() takes its workspace, with
// no code of the library's knowing the family.
TEST(FamilyStrategy, ItsOwnLaunchesComputeTheGemmOnTheGpu) {
  TILEMM_REQUIRE_DEVICE();
  for (const auto& name : kSlicedNames) {
    for (float beta : {0.0f, 0.5f}) {
      const auto check = testing::check_gemm(37, 53, 301, 1.5f, beta, [&](const GemmArgs& args) {
        run_variant(parse_variant(name), args);
      });
      EXPECT_EQ(check.wrong, 0) << name << " beta " << beta << ": " << check.first;
    }
  }
}

}  // namespace
}  // namespace tilemm
