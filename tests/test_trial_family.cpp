// tilemm-sustained-bench's trial families (tools/bench/trial_family.hpp): a library family's rules
// compiled from a template file on disk, beside the embedded one, without touching the templates
// hash of the build; as a new family that can run every shape tiled runs, it changes the kernels'
// fingerprint of those shapes (family_fingerprint.hpp); and every malformed --trial refused with the
// option named. NVRTC only, no GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "family_fingerprint.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "temp_dir.hpp"
#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"
#include "trial_family.hpp"

namespace tilemm {
namespace {

std::string refusal(const std::string& spec) {
  try {
    bench::register_trial_family(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(TrialFamily, CompilesTheFileOnDiskUnderTheFamilysRulesAndLeavesTheTemplatesHashAlone) {
  const std::string hash_before = detail::templates_hash();
  const Problem square = Problem::square(512);
  const std::string square_before = detail::kernels_fingerprint(square, 90);
  testing::TempDir dir;
  const std::string path = dir.file("tiled-trial.cu");
  // The embedded tiled.cu with one line added: what is compiled must be this file.
  std::ofstream(path) << detail::find_template("tiled.cu").source << "\n// trial\n";
  EXPECT_EQ(bench::register_trial_family("tiled=" + path), "tiledtrial");

  const Variant trial = parse_variant("tiledtrial_t16_p0");
  EXPECT_EQ(variant_name(trial), "tiledtrial_t16_p0");
  EXPECT_NE(detail::template_of(trial).source.find("// trial"), std::string_view::npos);
  EXPECT_EQ(detail::template_of(parse_variant("tiled_t16_p0")).source.find("// trial"),
            std::string_view::npos);
  const auto compiled = detail::compile_variant(trial, "sm_90");
  EXPECT_EQ(compiled.name, "tiledtrial_t16_p0");
  EXPECT_NE(std::string(compiled.cubin.begin(), compiled.cubin.end()).find("tiledtrial_t16_p0"),
            std::string::npos);
  // The tiled family's rules came along: its check refuses the same values.
  EXPECT_THROW(parse_variant("tiledtrial_t64_p0"), InvalidArgument);

  EXPECT_EQ(detail::templates_hash(), hash_before);
  EXPECT_NE(detail::kernels_fingerprint(square, 90), square_before);
  const std::string twice = refusal("tiled=" + path);
  EXPECT_NE(twice.find("'tiled' is given twice"), std::string::npos) << twice;
}

TEST(TrialFamily, MalformedSpecsUnknownFamiliesAndUnreadableFilesAreRefused) {
  for (const char* spec : {"", "tiled", "=x.cu", "tiled="}) {
    const std::string why = refusal(spec);
    EXPECT_NE(why.find("--trial: '" + std::string(spec) + "' is not FAMILY=FILE"), std::string::npos)
        << spec << ": " << why;
  }
  EXPECT_NE(refusal("nosuch=x.cu").find("no kernel family called 'nosuch'"), std::string::npos);
  EXPECT_NE(refusal("naive=/nonexistent/naive.cu").find("cannot read '/nonexistent/naive.cu'"),
            std::string::npos);
  testing::TempDir dir;
  const std::string empty = dir.file("empty.cu");
  std::ofstream{empty};
  EXPECT_NE(refusal("naive=" + empty).find("is empty"), std::string::npos);
}

}  // namespace
}  // namespace tilemm
