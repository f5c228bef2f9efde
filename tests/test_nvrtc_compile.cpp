// Every variant compiles to CUBIN with NVRTC, without a GPU: this is what CI can prove.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
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

// With a driver present NVRTC may serve a compile from the driver's compute cache, and then ptxas
// does not run and its report (registers, spills) is missing from the log. These tests read the
// report, so they opt out of that cache before NVRTC initializes it.
const int compute_cache_off = setenv("CUDA_CACHE_DISABLE", "1", 1);

class CompileEveryVariant : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileEveryVariant, ToCubinWithTheVariantNameAsKernelSymbol) {
  const std::string arch = GetParam();
  for (const auto& v : variant_space()) {
    const std::string name = variant_name(v);
    const auto compiled = detail::compile_variant(v, arch);
    EXPECT_EQ(compiled.name, name);
    EXPECT_EQ(compiled.arch, arch);
    EXPECT_EQ(compiled.template_hash.size(), 64u) << name;
    EXPECT_TRUE(is_elf(compiled.cubin)) << name << " did not produce a CUBIN (ELF) image";
    EXPECT_TRUE(contains(compiled.cubin, name)) << name << " is not a symbol of its CUBIN";
    // Local-memory spills would make a variant slow; none of the space may have them.
    EXPECT_GT(compiled.registers, 0) << compiled.log;
    EXPECT_EQ(compiled.spill_store_bytes, 0) << name << "\n" << compiled.log;
    EXPECT_EQ(compiled.spill_load_bytes, 0) << name << "\n" << compiled.log;
  }
}

INSTANTIATE_TEST_SUITE_P(Architectures, CompileEveryVariant, ::testing::Values("sm_90", "sm_80"));

TEST(Compile, CountsEveryCompilation) {
  const auto before = detail::nvrtc_compile_count();
  detail::compile_variant(parse_variant("naive"), "sm_90");
  EXPECT_EQ(detail::nvrtc_compile_count(), before + 1);
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

TEST(Compile, TemplatesAreEmbeddedWithTheirHash) {
  for (const char* file : {"naive.cu", "tiled.cu", "warptile.cu"}) {
    const auto& t = detail::find_template(file);
    EXPECT_NE(t.source.find("TILEMM_KERNEL_NAME"), std::string_view::npos) << file;
    EXPECT_EQ(t.sha256.size(), 64u);
  }
  EXPECT_THROW(detail::find_template("missing.cu"), Error);
}

}  // namespace
}  // namespace tilemm
