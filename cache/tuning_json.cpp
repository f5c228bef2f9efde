#include "tuning_json.hpp"

#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "row_split.hpp"
#include "tilemm/error.hpp"

namespace tilemm::cache {

using nlohmann::json;

json candidate_to_json(const CandidateResult& c) {
  return {{"variant", c.variant},
          {"status", to_string(c.status)},
          {"reason", c.reason},
          {"median_ms", c.stats.median_ms},
          {"min_ms", c.stats.min_ms},
          {"spread", c.stats.spread},
          {"samples", c.stats.samples},
          {"compile_ms", c.compile_ms}};
}

std::string entries_to_json(const std::vector<StoredEntry>& entries) {
  json doc;
  doc["format"] = kJsonFormatName;
  doc["format_version"] = kJsonFormatVersion;
  json list = json::array();
  for (const auto& e : entries) {
    json candidates = json::array();
    for (const auto& c : e.candidates) candidates.push_back(candidate_to_json(c));
    list.push_back({{"device_key", e.device_key},
                    {"arch", e.arch},
                    {"m", e.M},
                    {"n", e.N},
                    {"k", e.K},
                    {"problem_class", e.problem_class},
                    {"winner", e.winner},
                    {"median_ms", e.median_ms},
                    {"tflops", e.tflops},
                    {"margin", e.margin},
                    {"tuned_at", e.tuned_at},
                    {"tilemm_version", e.tilemm_version},
                    {"template_hash", e.versions.template_hash},
                    {"nvrtc_version", e.versions.nvrtc_version},
                    {"driver_version", e.versions.driver_version},
                    {"source", e.source},
                    {"candidates", candidates}});
  }
  doc["entries"] = list;
  return doc.dump(2) + "\n";
}

namespace {

// Walks a json value, naming every field by its path in errors.
class Reader {
 public:
  Reader(const json& value, std::string path) : value_(value), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw InvalidArgument(join(field), why);
  }

  const json& field(const std::string& name) const {
    if (!value_.is_object()) throw InvalidArgument(path_.empty() ? "document" : path_, "must be a JSON object");
    const auto it = value_.find(name);
    if (it == value_.end()) fail(name, "is missing");
    return *it;
  }

  std::string text(const std::string& name, const std::regex& pattern, const char* expected) const {
    const json& v = field(name);
    if (!v.is_string()) fail(name, std::string("must be a string (") + expected + ")");
    const auto s = v.get<std::string>();
    if (!std::regex_match(s, pattern)) fail(name, std::string("must be ") + expected + ", got \"" + s.substr(0, 80) + "\"");
    return s;
  }

  std::int64_t integer(const std::string& name, std::int64_t lo, std::int64_t hi) const {
    const json& v = field(name);
    if (!v.is_number_integer()) fail(name, "must be an integer");
    const auto x = v.get<std::int64_t>();
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail(name, "must be at most " + std::to_string(hi));
    if (x < lo || x > hi)
      fail(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
    return x;
  }

  double number(const std::string& name, double lo, bool lo_inclusive, double hi = std::numeric_limits<double>::max()) const {
    const json& v = field(name);
    if (!v.is_number()) fail(name, "must be a number");
    const double x = v.get<double>();
    if (!std::isfinite(x) || (lo_inclusive ? x < lo : x <= lo) || x > hi)
      fail(name, std::string("must be a finite number ") + (lo_inclusive ? ">= " : "> ") + std::to_string(lo));
    return x;
  }

  bool has(const std::string& name) const { return value_.is_object() && value_.contains(name); }

  const json& array(const std::string& name) const {
    const json& v = field(name);
    if (!v.is_array()) fail(name, "must be an array");
    return v;
  }

  std::string join(const std::string& field) const { return path_.empty() ? field : path_ + "." + field; }
  const std::string& path() const { return path_; }
  const json& value() const { return value_; }

 private:
  const json& value_;
  std::string path_;
};

const std::regex& any_text() {
  static const std::regex r(R"([\s\S]{0,4096})");
  return r;
}

// A variant this build knows, or a row-split plan (src/row_split.hpp).
void check_variant(const Reader& r, const std::string& field, const std::string& name) {
  if (detail::parse_row_split(name)) return;
  try {
    parse_variant(name);
  } catch (const InvalidArgument& e) {
    r.fail(field, std::string("is not a variant this build knows: ") + e.what());
  }
}

CandidateResult read_candidate(const Reader& r) {
  static const std::regex variant_pattern(R"([a-z][a-z0-9_]{0,127})");
  CandidateResult c;
  c.variant = r.text("variant", variant_pattern, "a variant name");
  check_variant(r, "variant", c.variant);
  const std::string status = r.text("status", any_text(), "a status");
  try {
    c.status = candidate_status_from_string(status);
  } catch (const InvalidArgument&) {
    r.fail("status", "must be one of ok, wrong_result, compile_error, launch_error, cannot_run, pruned; got \"" + status + "\"");
  }
  c.reason = r.text("reason", any_text(), "text of at most 4096 characters");
  const bool ok = c.status == CandidateStatus::ok;
  c.stats.median_ms = r.number("median_ms", 0.0, !ok);
  c.stats.min_ms = r.number("min_ms", 0.0, !ok);
  if (ok && c.stats.min_ms > c.stats.median_ms) r.fail("min_ms", "must not exceed median_ms");
  c.stats.spread = r.number("spread", 0.0, true);
  c.stats.samples = static_cast<int>(r.integer("samples", ok ? 1 : 0, 1000000));
  c.compile_ms = r.number("compile_ms", 0.0, true);
  return c;
}

StoredEntry read_entry(const Reader& r) {
  static const std::regex key_pattern(R"([^|]{1,255}\|sm_[0-9]{2,3}\|[0-9]{1,5}sm\|[0-9]{1,9}MiB)");
  static const std::regex arch_pattern(R"(sm_[0-9]{2,3})");
  static const std::regex class_pattern(R"(a[124]-(dense|strided))");
  static const std::regex time_pattern(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)");
  static const std::regex version_pattern(R"([0-9A-Za-z.+-]{1,64})");
  static const std::regex hash_pattern(R"([0-9a-f]{16})");
  static const std::regex source_pattern(R"(tuned|imported|preloaded)");
  constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();

  StoredEntry e;
  e.device_key = r.text("device_key", key_pattern, "a device key \"name|sm_XY|<SMs>sm|<memory>MiB\"");
  e.arch = r.text("arch", arch_pattern, "an architecture such as \"sm_90\"");
  if (e.device_key.find("|" + e.arch + "|") == std::string::npos)
    r.fail("arch", "must be the architecture named in device_key");
  e.M = r.integer("m", 1, kMaxDim);
  e.N = r.integer("n", 1, kMaxDim);
  e.K = r.integer("k", 1, kMaxDim);
  e.problem_class = r.text("problem_class", class_pattern, "a problem class such as \"a4-dense\"");
  e.winner = r.text("winner", any_text(), "a variant name");
  check_variant(r, "winner", e.winner);
  if (const auto rows = detail::parse_row_split(e.winner); rows && *rows >= e.M)
    r.fail("winner", "splits the rows at " + std::to_string(*rows) + ", which must be between 1 and m - 1");
  e.median_ms = r.number("median_ms", 0.0, false);
  e.tflops = r.number("tflops", 0.0, true, 1e6);
  e.margin = r.number("margin", 0.0, true);
  e.tuned_at = r.text("tuned_at", time_pattern, "an ISO-8601 UTC time \"YYYY-MM-DDThh:mm:ssZ\"");
  e.tilemm_version = r.text("tilemm_version", version_pattern, "a version string");
  e.versions.template_hash = r.text("template_hash", hash_pattern, "16 lowercase hex digits");
  e.versions.nvrtc_version = static_cast<int>(r.integer("nvrtc_version", 1, 1000000));
  e.versions.driver_version = static_cast<int>(r.integer("driver_version", 1, 1000000));
  e.source = r.text("source", source_pattern, "one of tuned, imported, preloaded");
  // Optional: an entry written by hand or by another tool may name just its winner.
  static const json no_candidates = json::array();
  const json& candidates = r.has("candidates") ? r.array("candidates") : no_candidates;
  std::set<std::string> seen;
  bool winner_listed = false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Reader cr(candidates[i], r.join("candidates[" + std::to_string(i) + "]"));
    CandidateResult c = read_candidate(cr);
    if (!seen.insert(c.variant).second) cr.fail("variant", "appears twice in this entry");
    if (c.variant == e.winner) {
      winner_listed = true;
      if (c.status != CandidateStatus::ok) cr.fail("status", "the winner's candidate must be ok");
    }
    e.candidates.push_back(std::move(c));
  }
  if (!candidates.empty() && !winner_listed) r.fail("winner", "is not among the entry's candidates");
  return e;
}

}  // namespace

std::vector<StoredEntry> entries_from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and also out_of_range for numbers beyond double (found by the fuzzer).
    throw InvalidArgument("document", std::string("is not valid JSON: ") + e.what());
  }
  const Reader root(doc, "");
  if (!doc.is_object()) throw InvalidArgument("document", "must be a JSON object");
  static const std::regex format_pattern(kJsonFormatName);
  root.text("format", format_pattern, std::string("\"").append(kJsonFormatName).append("\"").c_str());
  const auto version = root.integer("format_version", 0, std::numeric_limits<int>::max());
  if (version != kJsonFormatVersion)
    root.fail("format_version", "is " + std::to_string(version) + "; this build reads version " +
                                    std::to_string(kJsonFormatVersion));
  const json& list = root.array("entries");
  std::vector<StoredEntry> entries;
  std::set<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::string>> keys;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Reader er(list[i], "entries[" + std::to_string(i) + "]");
    StoredEntry e = read_entry(er);
    if (!keys.insert({e.device_key, e.M, e.N, e.K, e.problem_class}).second)
      er.fail("m", "this (device_key, m, n, k, problem_class) appears twice in the file");
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace tilemm::cache
