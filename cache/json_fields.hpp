// Field-by-field reading of a JSON value whose errors name the field's path.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "tilemm/error.hpp"

namespace tilemm::cache {

// Walks a JSON value, naming every field by its path in errors (InvalidArgument whose argument()
// is "entries[2].candidates[0].median_ms"): the one field checker of every JSON tilemm reads.
class JsonFieldReader {
 public:
  JsonFieldReader(const nlohmann::json& value, std::string path) : value_(value), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InvalidArgument(join(field), why);
  }

  const nlohmann::json& field(const std::string& name) const {
    if (!value_.is_object()) throw InvalidArgument(path_.empty() ? "document" : path_, "must be a JSON object");
    const auto it = value_.find(name);
    if (it == value_.end()) fail(name, "is missing");
    return *it;
  }

  // Text that `spelled` accepts (json_spellings.hpp).
  std::string text(const std::string& name, bool (*spelled)(const std::string&),
                   const char* expected) const {
    std::string s = string(name, expected);
    if (!spelled(s)) fail(name, std::string("must be ") + expected + ", got \"" + s.substr(0, 80) + "\"");
    return s;
  }

  // Any text of at most `max_size` characters (a regex such as [\s\S]{0,4096} says the same,
  // but costs microseconds per match, seconds over a large import).
  std::string text(const std::string& name, std::size_t max_size, const char* expected) const {
    std::string s = string(name, expected);
    if (s.size() > max_size) fail(name, std::string("must be ") + expected + ", got \"" + s.substr(0, 80) + "\"");
    return s;
  }

  std::string string(const std::string& name, const char* expected) const {
    const nlohmann::json& v = field(name);
    if (!v.is_string()) fail(name, std::string("must be a string (") + expected + ")");
    return v.get<std::string>();
  }

  std::int64_t integer(const std::string& name, std::int64_t lo, std::int64_t hi) const {
    const nlohmann::json& v = field(name);
    if (!v.is_number_integer()) fail(name, "must be an integer");
    const auto x = v.get<std::int64_t>();
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(name, "must be at most " + std::to_string(hi));
    if (x < lo || x > hi)
      fail(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    return x;
  }

  double number(const std::string& name, double lo, bool lo_inclusive, double hi = std::numeric_limits<double>::max()) const {
    const nlohmann::json& v = field(name);
    if (!v.is_number()) fail(name, "must be a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || (lo_inclusive ? x < lo : x <= lo) || x > hi)
      fail(name, std::string("must be a finite number ") + (lo_inclusive ? ">= " : "> ") + std::to_string(lo));
    return x;
  }

  bool has(const std::string& name) const { return value_.is_object() && value_.contains(name); }

  const nlohmann::json& array(const std::string& name) const {
    const nlohmann::json& v = field(name);
    if (!v.is_array()) fail(name, "must be an array");
    return v;
  }

  std::string join(const std::string& field) const { return path_.empty() ? field : path_ + "." + field; }
  const std::string& path() const { return path_; }
  const nlohmann::json& value() const { return value_; }

 private:
  const nlohmann::json& value_;
  std::string path_;
};

}  // namespace tilemm::cache
