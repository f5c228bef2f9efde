// The current UTC time as text, for cache timestamps and the names of files moved aside.
#pragma once

#include <ctime>
#include <string>

namespace tilemm::detail {

// Now, in UTC, formatted by strftime(): "%Y-%m-%dT%H:%M:%SZ" gives ISO 8601.
inline std::string utc_now_text(const char* strftime_format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof text, strftime_format, &tm);
  return text;
}

}  // namespace tilemm::detail
