#include "json_spellings.hpp"

#include <algorithm>
#include <cstddef>

namespace tilemm::cache {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// `s` from `from` holds only digits, at least `least` and at most `most` of them, then `suffix`
// to its end.
bool digits_then(const std::string& s, std::size_t from, std::size_t least, std::size_t most,
                 const std::string& suffix) {
  if (s.size() < from + suffix.size()) return false;
  const std::size_t count = s.size() - from - suffix.size();
  if (count < least || count > most) return false;
  if (s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0) return false;
  return std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from),
                     s.end() - static_cast<std::ptrdiff_t>(suffix.size()), is_digit);
}

}  // namespace

bool is_arch_spelling(const std::string& s) { return s.rfind("sm_", 0) == 0 && digits_then(s, 3, 2, 3, ""); }

bool is_device_key_spelling(const std::string& s) {
  const std::size_t a = s.find('|');
  if (a == std::string::npos || a == 0 || a > 255) return false;
  // The name is printed in tables and logs and used in keys: printable ASCII only, so that no
  // value read from a file or a fleet's store can move a terminal's cursor or split a line.
  if (!std::all_of(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a),
                   [](char ch) { return ch >= ' ' && ch <= '~'; }))
    return false;
  const std::size_t b = s.find('|', a + 1);
  if (b == std::string::npos) return false;
  const std::size_t c = s.find('|', b + 1);
  if (c == std::string::npos || s.find('|', c + 1) != std::string::npos) return false;
  return is_arch_spelling(s.substr(a + 1, b - a - 1)) &&
         digits_then(s.substr(b + 1, c - b - 1), 0, 1, 5, "sm") &&
         digits_then(s.substr(c + 1), 0, 1, 9, "MiB");
}

bool is_problem_class_spelling(const std::string& s) {
  if (s.size() < 3 || s[0] != 'a' || (s[1] != '1' && s[1] != '2' && s[1] != '4') || s[2] != '-')
    return false;
  const std::string kind = s.substr(3);
  return kind == "dense" || kind == "strided";
}

bool is_utc_time_spelling(const std::string& s) {
  static const char kForm[] = "0000-00-00T00:00:00Z";  // '0': a digit
  if (s.size() != sizeof(kForm) - 1) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (kForm[i] == '0' ? !is_digit(s[i]) : s[i] != kForm[i]) return false;
  return true;
}

bool is_version_spelling(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_digit(c) || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' ||
           c == '+' || c == '-';
  });
}

bool is_template_hash_spelling(const std::string& s) {
  return s.size() == 16 &&
         std::all_of(s.begin(), s.end(), [](char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); });
}

bool is_entry_source_spelling(const std::string& s) {
  return s == "tuned" || s == "imported" || s == "preloaded";
}

bool is_variant_spelling(const std::string& s) {
  if (s.empty() || s.size() > 128 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_';
  });
}

}  // namespace tilemm::cache
