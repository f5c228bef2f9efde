#include "text_fields.hpp"

namespace tilemm::detail {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> fields(1);
  for (const char c : text) {
    if (c == separator)
      fields.emplace_back();
    else
      fields.back() += c;
  }
  return fields;
}

std::optional<std::int64_t> parse_canonical_decimal(std::string_view digits,
                                                    std::size_t max_digits) {
  if (digits.empty() || digits.size() > max_digits || digits.size() > 18) return std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  std::int64_t value = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

}  // namespace tilemm::detail
