#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {
namespace {

TEST(VariantNames, EveryVariantOfTheSpaceRoundTrips) {
  const auto space = variant_space();
  ASSERT_FALSE(space.empty());
  for (const auto& v : space) {
    const std::string name = variant_name(v);
    EXPECT_EQ(parse_variant(name), v) << name;
    EXPECT_EQ(variant_name(parse_variant(name)), name);
  }
}

TEST(VariantNames, NamesAreUniqueAcrossTheSpace) {
  std::set<std::string> names;
  for (const auto& v : variant_space()) EXPECT_TRUE(names.insert(variant_name(v)).second);
}

TEST(VariantNames, TextbookSpaceIsNaivePlusSixTiles) {
  EXPECT_EQ(variant_space("naive").size(), 1u);
  EXPECT_EQ(variant_name(variant_space("naive")[0]), "naive");
  std::set<std::string> tiled;
  for (const auto& v : variant_space("tiled")) tiled.insert(variant_name(v));
  EXPECT_EQ(tiled, (std::set<std::string>{"tiled_t8_p0", "tiled_t8_p1", "tiled_t16_p0",
                                          "tiled_t16_p1", "tiled_t32_p0", "tiled_t32_p1"}));
}

// The sizes docs/tuning.md gives for each family's space: each a property of its own family's
// design, which adding another family leaves alone.
TEST(VariantNames, FamilySpacesHaveTheSizesTheDocsGive) {
  EXPECT_EQ(variant_space("splitk").size(), 120u);
  EXPECT_EQ(variant_space("clusterk").size(), 72u);
  EXPECT_EQ(variant_space("padded").size(), 10u);
  EXPECT_EQ(variant_space("multistage").size(), 22u);
  EXPECT_EQ(variant_space("streamk").size(), 4u);
  EXPECT_EQ(variant_space("gemvn").size(), 32u);
  EXPECT_EQ(variant_space("gemvm").size(), 32u);
  EXPECT_EQ(variant_space("gemvmring").size(), 24u);
  EXPECT_EQ(variant_space("gemvnring").size(), 32u);
  EXPECT_EQ(variant_space("tf32mma").size(), 20u);
  EXPECT_EQ(variant_space("tf32wgmma").size(), 56u);
  EXPECT_EQ(variant_space("tf32wgmmapad").size(), 12u);
  // The totals are not written down: test_family_registration computes them from the families.
}

// Warptile's 8 (block, warp) tilings: 64x64 with 32x32 warps; 64x128, 128x64 and 128x128 with 4
// warps; 128x128 with 64x32 or 32x64 warps, 256x64 and 256x128 with 8 warps. Times the thread
// sub-tiles 4x4 and 8x4 (plus 4x8 for tall warps), two BK and two VEC: 76, less the 3 of 256x64
// BK 8 VEC 4, whose B tile has fewer float4 than the block has threads: 73 of MIN_BLOCKS 1, plus
// the 10 float4 128x128 ones of 256 threads with MIN_BLOCKS 2.
TEST(VariantNames, WarptileSpaceIsEightTilingsTimesSubTilesBkAndVec) {
  std::set<std::string> tilings;
  int min_blocks_1 = 0, min_blocks_2 = 0;
  for (const auto& v : variant_space("warptile")) {
    tilings.insert(std::to_string(v.param("bm")) + "x" + std::to_string(v.param("bn")) + "/" +
                   std::to_string(v.param("wm")) + "x" + std::to_string(v.param("wn")));
    (v.param("mb") == 1 ? min_blocks_1 : min_blocks_2) += 1;
    if (v.param("mb") == 2) {
      EXPECT_EQ(v.param("bm"), 128);
      EXPECT_EQ(v.param("bn"), 128);
      EXPECT_EQ(v.param("v"), 4);
    }
  }
  EXPECT_EQ(tilings, (std::set<std::string>{"64x64/32x32", "64x128/32x64", "128x64/64x32",
                                            "128x128/64x64", "128x128/64x32", "128x128/32x64",
                                            "256x64/64x32", "256x128/64x64"}));
  EXPECT_EQ(min_blocks_1, 73);
  EXPECT_EQ(min_blocks_2, 10);
  try {
    parse_variant("warptile_bm256_bn64_bk8_wm64_wn32_tm8_tn4_v4_mb1");
    ADD_FAILURE() << "the 256x64 BK 8 VEC 4 tile parsed";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("the B tile (BK x BN) must split into whole rows"),
              std::string::npos)
        << e.what();
  }
}

TEST(VariantNames, ParsedValuesAreTheNamedOnes) {
  const Variant v = parse_variant("tiled_t16_p1");
  EXPECT_EQ(v.family, "tiled");
  EXPECT_EQ(v.param("t"), 16);
  EXPECT_EQ(v.param("p"), 1);
}

TEST(VariantNames, MalformedNamesAreRejectedWithTheArgumentNamed) {
  for (const char* bad : {"", "tiled", "tiled_t32", "tiled_t32_p1_x", "tiled_p1_t32",
                          "tiled_t032_p1", "tiled_t32_p+1", "tiled_t_p1", "tiled_t64_p0",
                          "tiled_t32_p2", "Tiled_t32_p1", "naive_t32", "warp_t32",
                          "tiled_t32_p1 ", "tiled__t32_p1", "tiled_t99999999999_p0"}) {
    try {
      parse_variant(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.argument(), "variant") << bad;
    }
  }
}

}  // namespace
}  // namespace tilemm
