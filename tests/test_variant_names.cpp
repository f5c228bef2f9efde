#include <gtest/gtest.h>

#include <set>

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
