// The 64-bit FNV-1a hash of a text as 16 lowercase hex digits: the form of every version hash a
// stored result or CUBIN carries (templates, kernel fingerprints, results hashes). Stable across
// builds and machines, unlike std::hash.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tilemm::detail {

inline std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex);
}

}  // namespace tilemm::detail
