// Every variant compiles to CUBIN with NVRTC, without a GPU: this is what CI can prove.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "background_compiles.hpp"
#include "compiled_variants.hpp"
#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "support_kernels.hpp"
#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {
namespace {

bool is_elf(const std::vector<char>& image) {
  return image.size() > 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' &&
         image[3] == 'F';
}

bool contains(const std::vector<char>& image, const std::string& text) {
  return std::search(image.begin(), image.end(), text.begin(), text.end()) != image.end();
}

// The kernels of a CUBIN whose symbol starts with `prefix`: each has a section ".text.<symbol>",
// whose name is a NUL-terminated string of the section name table.
std::set<std::string> kernels_starting_with(const std::vector<char>& image,
                                            const std::string& prefix) {
  const std::string section = ".text." + prefix;
  std::set<std::string> symbols;
  for (auto it = image.begin();
       (it = std::search(it, image.end(), section.begin(), section.end())) != image.end(); ++it) {
    const auto name = it + 6;  // past ".text."
    symbols.insert(std::string(name, std::find(name, image.end(), '\0')));
  }
  return symbols;
}

// With a driver present NVRTC may serve a compile from the driver's compute cache, and then ptxas
// does not run and its report (registers, spills) is missing from the log. These tests read the
// report, so they opt out of that cache before NVRTC initializes it.
const int compute_cache_off = setenv("CUDA_CACHE_DISABLE", "1", 1);

// Compiles `space` for `arch` on every core, as the tuner does, and checks each result in order:
// a CUBIN whose kernels are the variant's (no more, no fewer), registers reported, no spills.
void expect_every_variant_compiles(const std::vector<Variant>& space, const std::string& arch) {
  std::vector<std::optional<detail::CompiledVariant>> compiled(space.size());
  std::vector<std::string> errors(space.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < space.size(); i = next++) {
      try {
        compiled[i] = detail::compile_variant(space[i], arch);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();

  for (std::size_t i = 0; i < space.size(); ++i) {
    const std::string name = variant_name(space[i]);
    ASSERT_TRUE(compiled[i].has_value()) << name << ": " << errors[i];
    const auto& c = *compiled[i];
    EXPECT_EQ(c.name, name);
    EXPECT_EQ(c.arch, arch);
    EXPECT_EQ(c.template_hash.size(), 64u) << name;
    EXPECT_TRUE(is_elf(c.cubin)) << name << " did not produce a CUBIN (ELF) image";
    EXPECT_TRUE(contains(c.cubin, name)) << name << " is not a symbol of its CUBIN";
    // The module's kernels are the GEMM kernel and the extra ones its family lists (split-K's
    // reduction, padded's copy), which the loader looks up: no more, no fewer.
    std::set<std::string> expected = {name};
    for (const auto& suffix : detail::find_family(space[i].family).extra_kernels(space[i]))
      expected.insert(name + suffix);
    EXPECT_EQ(kernels_starting_with(c.cubin, name), expected) << name;
    // Local-memory spills would make a variant slow; none of the space may have them, in any
    // kernel of its module.
    EXPECT_GT(c.registers, 0) << c.log;
    // The registers reported are the GEMM kernel's, not its module's helper kernel's: a
    // register-blocked kernel holds at least its WM * WN / 32 accumulators per thread.
    if (const auto& p = space[i].params;
        std::any_of(p.begin(), p.end(), [](const auto& kv) { return kv.first == "wm"; })) {
      EXPECT_GE(c.registers, space[i].param("wm") * space[i].param("wn") / 32) << name << "\n" << c.log;
    }
    // A warpgroup's 64 x BN accumulators are BN / 2 per thread.
    if (space[i].family == "tf32wgmma" || space[i].family == "tf32wgmmapad") {
      EXPECT_GE(c.registers, space[i].param("bn") / 2) << name;
    }
    EXPECT_EQ(c.spill_store_bytes, 0) << name << "\n" << c.log;
    EXPECT_EQ(c.spill_load_bytes, 0) << name << "\n" << c.log;
    // ptxas' C7515: it found the accumulators of a wgmma pipeline touched between the wgmmas and
    // made them wait for each other, a silent loss of most of their speed.
    EXPECT_EQ(c.log.find("C7515"), std::string::npos) << name << "\n" << c.log;
  }
}

// Which variants one instance compiles: those building for `arch` whose index among them is
// `part` modulo `parts`, and with `parts` above 2 the first of each family too. The H200's
// architecture is compiled whole in two halves, so that ctest runs them on two cores; sm_80, which
// no machine of the project runs, one variant in 4 and every family.
struct CompileSlice {
  const char* arch;
  std::size_t part, parts;
};

void PrintTo(const CompileSlice& s, std::ostream* os) {
  *os << s.arch << ", part " << s.part + 1 << " of " << s.parts;
}

std::string slice_name(const ::testing::TestParamInfo<CompileSlice>& info) {
  return std::string(info.param.arch) + "_" + std::to_string(info.param.part + 1) + "of" +
         std::to_string(info.param.parts);
}

class CompileEveryVariant : public ::testing::TestWithParam<CompileSlice> {};

TEST_P(CompileEveryVariant, ToCubinWithTheVariantNameAsKernelSymbol) {
  const CompileSlice slice = GetParam();
  const std::string arch = slice.arch;
  // The variants this architecture has (clusterk and the split skinny variants need sm_90);
  // can_run() keeps the others off such devices.
  std::vector<Variant> builds;
  for (const auto& v : variant_space())
    if (detail::variant_builds_for(v, arch)) builds.push_back(v);
  if (arch == "sm_80") {
    EXPECT_LT(builds.size(), variant_space().size());
  } else {
    EXPECT_EQ(builds.size(), variant_space().size());
  }
  std::vector<Variant> space;
  std::set<std::string> families;
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const bool first_of_family = families.insert(builds[i].family).second;
    if (i % slice.parts == slice.part || (slice.parts > 2 && first_of_family))
      space.push_back(builds[i]);
  }
  expect_every_variant_compiles(space, arch);
}

INSTANTIATE_TEST_SUITE_P(Architectures, CompileEveryVariant,
                         ::testing::Values(CompileSlice{"sm_90", 0, 2}, CompileSlice{"sm_90", 1, 2},
                                           CompileSlice{"sm_80", 0, 4}),
                         slice_name);

// One family's variants for every architecture they build for, without spills: the quick check
// of a family under work (CompileEveryVariant compiles them all, slowly). The tensor-core
// families, whose registers are the tightest.
class CompileFamily : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileFamily, EveryVariantForEachArchitectureItBuildsFor) {
  const std::vector<Variant> family = variant_space(GetParam());
  ASSERT_FALSE(family.empty());
  bool built_somewhere = false;
  for (const std::string arch : {"sm_80", "sm_90"}) {
    std::vector<Variant> space;
    for (const auto& v : family)
      if (detail::variant_builds_for(v, arch)) space.push_back(v);
    if (space.empty()) continue;
    built_somewhere = true;
    SCOPED_TRACE(arch);
    expect_every_variant_compiles(space, arch);
  }
  EXPECT_TRUE(built_somewhere);
}

INSTANTIATE_TEST_SUITE_P(TensorCores, CompileFamily, ::testing::Values("tf32mma", "tf32wgmma", "tf32wgmmapad"));

TEST(Compile, InTheBackgroundKeepsTheCubinForTheNextRequest) {
  const Variant v = parse_variant("tiled_t8_p0");
  const detail::BackgroundCompile compilation = detail::compile_in_background(v, "sm_90");
  detail::wait_for_background_compiles();
  EXPECT_EQ(compilation.ended.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const auto before = detail::nvrtc_compile_count();
  const detail::CompiledVariant kept = detail::compile_variant_once(v, "sm_90");
  EXPECT_EQ(detail::nvrtc_compile_count(), before);
  EXPECT_EQ(kept.compile_ms, 0.0);
  EXPECT_FALSE(kept.cubin.empty());
}

TEST(Compile, CountsEveryCompilation) {
  const auto before = detail::nvrtc_compile_count();
  detail::compile_variant(parse_variant("naive"), "sm_90");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 1);
}

TEST(Compile, WarmingUpCompilesOneEmptyKernel) {
  const auto before = detail::nvrtc_compile_count();
  detail::warm_up_nvrtc("sm_90");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 1);
}

// The exit path (background_tuning.cpp): stopping waits for the compilation in flight to leave
// NVRTC, and refuses every later one without calling NVRTC. Returns 0 when both held.
int stop_compilations_and_check() {
  const auto before = detail::nvrtc_compile_count();
  std::atomic<bool> started{false};
  bool compiled = false, refused_first = false;
  std::thread compiling([&] {
    started = true;
    try {
      detail::compile_variant(parse_variant("tiled_t16_p0"), "sm_90");
      compiled = true;
    } catch (const CompileError&) {
      refused_first = true;
    }
  });
  while (!started) std::this_thread::yield();
  // A compilation takes ~100 ms: after this pause it is almost surely inside NVRTC (if not, it
  // must be refused); it must have left NVRTC when stop_nvrtc_compilations returns.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  detail::stop_nvrtc_compilations();
  const auto at_stop = detail::nvrtc_compile_count();
  compiling.join();
  const bool whole = compiled ? at_stop == before + 1 : refused_first && at_stop == before;
  bool refused = false;
  try {
    detail::compile_variant(parse_variant("naive"), "sm_90");
  } catch (const CompileError& e) {
    refused = std::string(e.what()).find("the process is exiting") != std::string::npos &&
              e.variant() == "naive";
  }
  return whole && refused && detail::nvrtc_compile_count() == at_stop ? 0 : 1;
}

// Irreversible for the process, so in a child.
TEST(CompileDeathTest, StoppingWaitsForRunningCompilationsAndRefusesNewOnes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(stop_compilations_and_check()), ::testing::ExitedWithCode(0), "");
}

// The exit's wait for a compilation is said at info level, with how long it took. The variant
// takes several hundred milliseconds to compile: 50 ms in, it is inside NVRTC.
TEST(CompileDeathTest, AnExitThatWaitsForACompilationSaysSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto stop_during_a_compilation = [] {
    setenv("TILEMM_LOG", "info", 1);
    std::thread compiling([] {
      try {
        detail::compile_variant(default_variant(), "sm_90");
      } catch (const CompileError&) {
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    detail::stop_nvrtc_compilations();
    compiling.join();
    std::exit(0);
  };
  EXPECT_EXIT(stop_during_a_compilation(), ::testing::ExitedWithCode(0),
              "tilemm: info: process exit: waiting for 1 kernel compilation to end \\(NVRTC "
              "cannot be interrupted\\)\ntilemm: info: process exit: the compilations ended in "
              "[0-9]+\\.[0-9]{3} ms");
}

TEST(Compile, FailureNamesTheVariantAndCarriesTheNvrtcLog) {
  try {
    detail::compile_variant(parse_variant("tiled_t16_p0"), "sm_1");
    FAIL() << "compiling for a non-existent architecture succeeded";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.variant(), "tiled_t16_p0");
    EXPECT_NE(std::string(e.what()).find("tiled_t16_p0"), std::string::npos) << e.what();
    EXPECT_FALSE(e.log().empty());
    EXPECT_NE(std::string(e.what()).find(e.log()), std::string::npos);
  }
}

TEST(Compile, EveryFamilysTemplateIsEmbeddedWithItsHash) {
  for (const auto& family : detail::families()) {
    const auto& t = detail::find_template(family.template_file);
    EXPECT_NE(t.source.find("TILEMM_KERNEL_NAME"), std::string_view::npos) << t.file;
    EXPECT_EQ(t.sha256.size(), 64u);
  }
  EXPECT_THROW(detail::find_template("missing.cu"), Error);
}

// An embedded template that no family compiles would still change templates_hash(), making
// every tuning result stale for nothing.
TEST(Compile, EveryEmbeddedTemplateBelongsToAFamily) {
  std::set<std::string> used;
  for (const auto& family : detail::families()) used.insert(family.template_file);
  ASSERT_FALSE(detail::embedded_templates().empty());
  for (const auto& t : detail::embedded_templates())
    EXPECT_EQ(used.count(std::string(t.file)), 1u) << t.file;
}

// cmake/embed_templates.cmake pastes the headers a template includes (kernel_templates/*.cuh) in
// place, and the headers those include (gemvn.cu and gemvm.cu take cluster.cuh through
// skinny.cuh), each once: NVRTC gets no #include to resolve, and the template's hash, in every
// cache key of its kernels, changes when any header it pulls in does.
TEST(Compile, TheHeadersATemplateIncludesArePastedIn) {
  for (const auto& t : detail::embedded_templates())
    EXPECT_EQ(t.source.find(".cuh\""), std::string_view::npos) << t.file << " still includes one";
  const std::vector<std::pair<const char*, const char*>> pasted = {
      {"multistage.cu", "#define TILEMM_CP_ASYNC_CUH"},
      {"multistage.cu", "#define TILEMM_STREAM_K_CUH"},
      {"gemvn.cu", "#define TILEMM_CP_ASYNC_CUH"},
      {"gemvn.cu", "#define TILEMM_SKINNY_CUH"},
      {"gemvm.cu", "#define TILEMM_CLUSTER_CUH"},
      {"warptile.cu", "#define TILEMM_EPILOGUE_CUH"},
      {"tf32mma.cu", "#define TILEMM_TF32_CUH"},
      {"tf32wgmma.cu", "#define TILEMM_STREAM_K_CUH"}};
  for (const auto& [file, guard] : pasted) {
    const std::string_view source = detail::find_template(file).source;
    EXPECT_NE(source.find(guard), std::string_view::npos) << file << " lacks " << guard;
    EXPECT_EQ(source.find(guard), source.rfind(guard)) << file << " has " << guard << " twice";
  }
}

// Every support file (the transpose, the tuner's verification kernels) compiles for both
// architectures, holds exactly the kernels the loader looks up in it, and spills nothing; and
// every embedded support file is one the loader knows.
TEST(Compile, EverySupportFileCompilesWithTheKernelsItsLoaderLooksUp) {
  std::set<std::string> listed;
  for (const auto& module : detail::support_modules()) {
    listed.insert(std::string(module.file));
    const detail::EmbeddedTemplate* source = nullptr;
    for (const auto& t : detail::embedded_support_kernels())
      if (t.file == module.file) source = &t;
    ASSERT_NE(source, nullptr) << module.file << " is not embedded";
    ASSERT_FALSE(module.kernels.empty()) << module.file;
    std::set<std::string> expected;
    for (const auto k : module.kernels) expected.insert(std::string(k));
    for (const std::string arch : {"sm_90", "sm_80"}) {
      const auto c = detail::compile_template(*source, std::string(module.kernels.front()), arch, {});
      EXPECT_TRUE(is_elf(c.cubin)) << module.file << " for " << arch;
      EXPECT_EQ(kernels_starting_with(c.cubin, "tilemm_"), expected) << module.file << " for " << arch;
      EXPECT_GT(c.registers, 0) << c.log;
      EXPECT_EQ(c.spill_store_bytes, 0) << module.file << "\n" << c.log;
      EXPECT_EQ(c.spill_load_bytes, 0) << module.file << "\n" << c.log;
    }
  }
  for (const auto& t : detail::embedded_support_kernels())
    EXPECT_EQ(listed.count(std::string(t.file)), 1u) << t.file << " is embedded but no loader lists it";
}

TEST(CompiledOnce, ASecondRequestOfAVariantInTheProcessRunsNoCompilation) {
  const Variant v = parse_variant("naive");
  const std::uint64_t before = detail::nvrtc_compile_count();
  const detail::CompiledVariant first = detail::compile_variant_once(v, "sm_80");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 1);
  const detail::CompiledVariant again = detail::compile_variant_once(v, "sm_80");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 1);
  EXPECT_EQ(again.cubin, first.cubin);
  EXPECT_EQ(again.name, first.name);
  EXPECT_EQ(again.compile_ms, 0.0);  // nothing was compiled for it
  // Another architecture is another binary.
  const detail::CompiledVariant other = detail::compile_variant_once(v, "sm_90");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 2);
  EXPECT_NE(other.cubin, first.cubin);
}

}  // namespace
}  // namespace tilemm
