// The one rule for splitting names and lists into fields and for reading a number in its
// canonical spelling (variant names, row-split plan names, tilemm-tune's --sizes/--shapes).
#include <gtest/gtest.h>

#include "text_fields.hpp"

namespace tilemm::detail {
namespace {

using Fields = std::vector<std::string>;

TEST(TextFields, NSeparatorsGiveNPlusOneFieldsEmptyOnesIncluded) {
  EXPECT_EQ(split("tiled_t32_p0", '_'), (Fields{"tiled", "t32", "p0"}));
  EXPECT_EQ(split("", ','), (Fields{""}));
  EXPECT_EQ(split(",", ','), (Fields{"", ""}));
  EXPECT_EQ(split("a,,b,", ','), (Fields{"a", "", "b", ""}));
  EXPECT_EQ(split("1x2x3", ','), (Fields{"1x2x3"}));
}

TEST(TextFields, OnlyTheCanonicalSpellingOfANumberParses) {
  EXPECT_EQ(parse_canonical_decimal("0", 9), 0);
  EXPECT_EQ(parse_canonical_decimal("256", 9), 256);
  EXPECT_EQ(parse_canonical_decimal("999999999", 9), 999999999);
  EXPECT_EQ(parse_canonical_decimal("999999999999999999", 18), 999999999999999999);
  for (const char* bad : {"", "00", "0256", "+1", "-1", " 1", "1 ", "12x", "1.5", "1000000000"})
    EXPECT_FALSE(parse_canonical_decimal(bad, 9).has_value()) << bad;
  // More digits than asked for, or than an int64 always holds, never parse.
  EXPECT_FALSE(parse_canonical_decimal("1234567890123456789", 19).has_value());
}

}  // namespace
}  // namespace tilemm::detail
