// How families are registered (src/core/family_registry.hpp, TILEMM_FAMILY): the library's in the
// search order their files declare, spaces whose sizes follow from each family's parameters and
// check, and families added by a test with only their two files, tests/trial_family/<name>.cu and
// <name>.cpp, listed by the same tilemm_kernel_families (CMakeLists.txt) as the library's. This
// test names no trial family: a new pair of files is checked as it stands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "family_registry.hpp"
#include "gemm_check.hpp"
#include "gpu_test_support.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/error.hpp"
#include "tilemm/gemm.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {
std::vector<FamilyRegistration> trial_family_registrations();   // tests/trial_family/*.cpp
const std::vector<EmbeddedTemplate>& trial_family_templates();  // tests/trial_family/*.cu
}  // namespace tilemm::detail

namespace tilemm {
namespace {

using detail::Family;
using detail::FamilyRegistration;

// Registered before any test runs; a refusal is reported by every test that needs the families.
const std::string registration_error = [] {
  try {
    detail::register_extra_families(detail::trial_family_registrations(),
                                     detail::trial_family_templates());
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::string();
}();

// The names of the families `registrations` make, in search order (by key, not by list order).
std::vector<std::string> names_in_key_order(std::vector<FamilyRegistration> registrations) {
  std::sort(registrations.begin(), registrations.end(),
            [](const auto& a, const auto& b) { return a.search_order < b.search_order; });
  std::vector<std::string> names;
  for (const auto& r : registrations) names.push_back(r.make().name);
  return names;
}

std::vector<std::string> trial_names() {
  return names_in_key_order(detail::trial_family_registrations());
}

// Every combination of a family's parameter values, walked recursively (variant_space walks an
// odometer): the product the space is cut from.
void for_each_combination(const Family& f, const std::function<void(const Variant&)>& visit,
                          Variant v = {}, std::size_t i = 0) {
  if (i == 0) v = Variant{f.name, {}};
  if (i == f.params.size()) return visit(v);
  for (int value : f.params[i].values) {
    Variant next = v;
    next.params.emplace_back(f.params[i].key, value);
    for_each_combination(f, visit, next, i + 1);
  }
}

// --- The library's families ----------------------------------------------------------------------

TEST(FamilyOrder, TheLibrarysFamiliesComeInTheSearchOrderTheirFilesDeclare) {
  ASSERT_EQ(registration_error, "");
  const auto registrations = detail::library_family_registrations();
  ASSERT_FALSE(registrations.empty());
  std::set<int> keys;
  for (const auto& r : registrations)
    EXPECT_TRUE(keys.insert(r.search_order).second) << r.factory << " shares its search order";
  const auto expected = names_in_key_order(registrations);
  const auto names = family_names();
  ASSERT_GE(names.size(), expected.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + expected.size()), expected);
  // Each registration's factory is named after its family (<name>_family), as the files write it.
  for (const auto& r : registrations) EXPECT_EQ(std::string(r.factory), r.make().name + "_family");
}

// The order docs/kernels.md documents for the families the library has now; a family added later
// may fall anywhere between them, so this is a subsequence, not the whole list.
TEST(FamilyOrder, TheLibrarysFamiliesKeepTheirDocumentedRelativeOrder) {
  const std::vector<std::string> documented = {
      "naive",  "tiled", "warptile",  "splitk",    "padded",  "clusterk",  "multistage",
      "streamk", "gemvn", "gemvm",    "gemvmring", "gemvnring", "tf32mma", "tf32wgmma",
      "tf32wgmmapad"};
  const auto names = family_names();
  auto at = names.begin();
  for (const auto& family : documented) {
    at = std::find(at, names.end(), family);
    ASSERT_TRUE(at != names.end()) << family << " is missing or out of its documented place";
    ++at;
  }
}

Family named(const char* name) {
  Family f;
  f.name = name;
  return f;
}
Family made_a() { return named("a"); }
Family made_b() { return named("b"); }
Family made_c() { return named("c"); }

TEST(FamilyOrder, TheSearchOrderIsTheKeysNotTheListsAndAKeyServesOneFamily) {
  const auto ordered = detail::in_search_order({{30, "made_c", made_c}, {10, "made_a", made_a},
                                                 {20, "made_b", made_b}});
  ASSERT_EQ(ordered.size(), 3u);
  EXPECT_EQ(ordered[0].name + ordered[1].name + ordered[2].name, "abc");
  try {
    detail::in_search_order({{10, "made_a", made_a}, {10, "made_b", made_b}});
    ADD_FAILURE() << "two families at one search order were accepted";
  } catch (const Error& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("made_a and made_b both register at search order 10"), std::string::npos)
        << why;
  }
}

// The space of every family is its product of values less what its check rejects, and the whole
// space is the families' spaces in family order: no count is written down anywhere.
TEST(VariantCounts, EachSpaceIsTheProductOfItsValuesLessWhatItsCheckRejects) {
  ASSERT_EQ(registration_error, "");
  std::size_t total = 0, highest = 0;
  std::vector<std::string> concatenated;
  for (const Family& f : detail::families()) {
    std::size_t product = 1, rejected = 0;
    for (const auto& p : f.params) product *= p.values.size();
    std::set<std::string> accepted;
    for_each_combination(f, [&](const Variant& v) {
      if (f.check_params(v).empty()) accepted.insert(variant_name(v));
      else ++rejected;
    });
    const auto space = variant_space(f.name);
    EXPECT_EQ(space.size(), product - rejected) << f.name;
    EXPECT_EQ(accepted.size(), space.size()) << f.name;
    for (const auto& v : space) {
      EXPECT_EQ(accepted.count(variant_name(v)), 1u) << variant_name(v);
      concatenated.push_back(variant_name(v));
      if (precision_of(v) == Precision::highest) ++highest;
    }
    total += space.size();
  }
  std::vector<std::string> all;
  for (const auto& v : variant_space()) all.push_back(variant_name(v));
  EXPECT_EQ(all.size(), total);
  EXPECT_EQ(all, concatenated);
  EXPECT_EQ(variant_space(Precision::highest).size(), highest);
}

// --- A family added with its two files -----------------------------------------------------------

TEST(AddedFamily, ItsTwoFilesRegisterItAfterTheLibrarysFamiliesInItsSearchOrder) {
  ASSERT_EQ(registration_error, "");
  const auto trials = trial_names();
  ASSERT_FALSE(trials.empty()) << "tests/trial_family/ registers no family";
  const auto names = family_names();
  ASSERT_EQ(names.size(), detail::library_family_registrations().size() + trials.size());
  EXPECT_EQ(std::vector<std::string>(names.end() - static_cast<std::ptrdiff_t>(trials.size()),
                                     names.end()),
            trials);
}

TEST(AddedFamily, ItsVariantsAreInTheSpaceWithNamesThatParseAndItsCheckRefusesTheRest) {
  ASSERT_EQ(registration_error, "");
  std::vector<std::string> all;
  for (const auto& v : variant_space()) all.push_back(variant_name(v));
  for (const auto& name : trial_names()) {
    const auto space = variant_space(name);
    ASSERT_FALSE(space.empty()) << name;
    for (const auto& v : space) {
      EXPECT_EQ(parse_variant(variant_name(v)), v) << variant_name(v);
      EXPECT_NE(std::find(all.begin(), all.end(), variant_name(v)), all.end()) << variant_name(v);
    }
    for_each_combination(detail::find_family(name), [&](const Variant& v) {
      const std::string why = detail::find_family(name).check_params(v);
      if (why.empty()) return;
      try {
        parse_variant(variant_name(v));
        ADD_FAILURE() << variant_name(v) << " parsed although its family's check refuses it";
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      }
    });
  }
}

// NVRTC needs no GPU: every variant compiles from the test's own template, which stays out of
// the library's embedded templates and so out of the hash that keys every stored result.
TEST(AddedFamily, NvrtcCompilesEveryVariantFromItsOwnTemplateOutsideTheLibrarysHash) {
  ASSERT_EQ(registration_error, "");
  for (const auto& name : trial_names()) {
    const std::string file = detail::find_family(name).template_file;
    for (const auto& t : detail::embedded_templates())
      EXPECT_NE(t.file, file) << "the library embeds " << file;
    for (const auto& v : variant_space(name)) {
      EXPECT_EQ(detail::template_of(v).file, file);
      const auto compiled = detail::compile_variant(v, "sm_80");
      EXPECT_EQ(compiled.name, variant_name(v));
      EXPECT_NE(std::string(compiled.cubin.begin(), compiled.cubin.end()).find(variant_name(v)),
                std::string::npos)
          << variant_name(v);
    }
  }
}

TEST(AddedFamily, OnAGpuEveryVariantComputesTheGemm) {
  TILEMM_REQUIRE_DEVICE();
  ASSERT_EQ(registration_error, "");
  for (const auto& name : trial_names())
    for (const auto& v : variant_space(name))
      for (float beta : {0.0f, 0.5f}) {
        const auto check = testing::check_gemm(37, 53, 301, 1.5f, beta, [&](const GemmArgs& args) {
          run_variant(v, args);
        });
        EXPECT_EQ(check.wrong, 0) << variant_name(v) << " beta " << beta << ": " << check.first;
      }
}

}  // namespace
}  // namespace tilemm
