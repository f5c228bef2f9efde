// Reading the text tilemm writes itself (variant names, plan names, lists on the command line):
// one rule for splitting into fields and one for the canonical spelling of a number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilemm::detail {

// The fields of `text` between separators: n separators give n + 1 fields, empty ones included
// ("" gives one empty field, "a,,b," gives "a", "", "b", ""). Cost: copies the text once.
std::vector<std::string> split(std::string_view text, char separator);

// The value of `digits` if it is a non-negative decimal in its one canonical spelling (digits
// only, no sign, no leading zero except "0" itself) of at most `max_digits` (<= 18) digits, so
// that a name that holds a number has exactly one spelling; std::nullopt otherwise.
std::optional<std::int64_t> parse_canonical_decimal(std::string_view digits,
                                                    std::size_t max_digits);

}  // namespace tilemm::detail
