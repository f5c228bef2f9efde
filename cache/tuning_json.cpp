#include "tuning_json.hpp"

#include <cmath>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <algorithm>
#include <regex>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

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
                    {"precision", to_string(e.precision)},
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

// nlohmann's message in plain words: "not valid JSON at line 3, column 5: invalid literal", without
// its exception ids and "syntax error while parsing ..." framing, which mean nothing to a user.
std::string plain_json_error(const json::exception& e) {
  const std::string what = e.what();
  if (what.find("number overflow") != std::string::npos) return "not valid JSON: a number is out of range";
  static const auto& where = *new std::regex(R"(at line (\d+), column (\d+): (.*))");
  std::smatch m;
  if (!std::regex_search(what, m, where)) return "not valid JSON";
  std::string reason = m[3].str();
  if (const auto dash = reason.find(" - "); dash != std::string::npos) reason = reason.substr(dash + 3);
  reason = reason.substr(0, reason.find(';'));
  return "not valid JSON at line " + m[1].str() + ", column " + m[2].str() + ": " + reason;
}

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
    std::string s = string(name, expected);
    if (!std::regex_match(s, pattern)) fail(name, std::string("must be ") + expected + ", got \"" + s.substr(0, 80) + "\"");
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
    const json& v = field(name);
    if (!v.is_string()) fail(name, std::string("must be a string (") + expected + ")");
    return v.get<std::string>();
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

constexpr std::size_t kMaxText = 4096;

// A name the running build can serve for an entry of M rows, by the check its caller injected.
void check_name(const Reader& r, const std::string& field, const std::string& name,
                std::int64_t M, const NameCheck& names) {
  if (const std::string why = names(name, M); !why.empty()) r.fail(field, why);
}

// [a-z][a-z0-9_]{0,127}, checked by hand: std::regex took a sixth of the time of reading the
// preloaded results, which every process does on its first preloaded lookup.
bool is_variant_spelling(const std::string& s) {
  if (s.empty() || s.size() > 128 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
}

CandidateResult read_candidate(const Reader& r, std::int64_t M, const NameCheck& names) {
  CandidateResult c;
  c.variant = r.text("variant", kMaxText, "a variant name");
  if (!is_variant_spelling(c.variant))
    r.fail("variant", "must be a variant name, got \"" + c.variant.substr(0, 80) + "\"");
  check_name(r, "variant", c.variant, M, names);
  const std::string status = r.text("status", kMaxText, "a status");
  try {
    c.status = candidate_status_from_string(status);
  } catch (const InvalidArgument&) {
    r.fail("status", "must be one of ok, wrong_result, compile_error, launch_error, cannot_run, pruned; got \"" + status + "\"");
  }
  c.reason = r.text("reason", kMaxText, "text of at most 4096 characters");
  const bool ok = c.status == CandidateStatus::ok;
  c.stats.median_ms = r.number("median_ms", 0.0, !ok);
  c.stats.min_ms = r.number("min_ms", 0.0, !ok);
  if (ok && c.stats.min_ms > c.stats.median_ms) r.fail("min_ms", "must not exceed median_ms");
  c.stats.spread = r.number("spread", 0.0, true);
  c.stats.samples = static_cast<int>(r.integer("samples", ok ? 1 : 0, 1000000));
  c.compile_ms = r.number("compile_ms", 0.0, true);
  return c;
}

StoredEntry read_entry(const Reader& r, const NameCheck& names) {
  // Never destroyed: a background tuning may read the preloaded results while the process exits.
  static const auto& key_pattern = *new std::regex(R"([^|]{1,255}\|sm_[0-9]{2,3}\|[0-9]{1,5}sm\|[0-9]{1,9}MiB)");
  static const auto& arch_pattern = *new std::regex(R"(sm_[0-9]{2,3})");
  static const auto& class_pattern = *new std::regex(R"(a[124]-(dense|strided))");
  static const auto& time_pattern = *new std::regex(R"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)");
  static const auto& version_pattern = *new std::regex(R"([0-9A-Za-z.+-]{1,64})");
  static const auto& hash_pattern = *new std::regex(R"([0-9a-f]{16})");
  static const auto& source_pattern = *new std::regex(R"(tuned|imported|preloaded)");
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
  // Required by version 2, absent from version 1: which of the two the document is may only be
  // known at its end (DocumentReader::finish checks that the entries agree with it).
  if (r.has("precision")) {
    const std::string precision = r.text("precision", kMaxText, "one of highest, high, medium");
    const auto parsed = parse_precision(precision);
    if (!parsed)
      r.fail("precision", "must be one of highest, high, medium; got \"" + precision.substr(0, 80) + "\"");
    e.precision = *parsed;
  }
  e.winner = r.text("winner", kMaxText, "a variant name");
  check_name(r, "winner", e.winner, e.M, names);
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
  static const auto& no_candidates = *new json(json::array());  // never destroyed, like the patterns
  const json& candidates = r.has("candidates") ? r.array("candidates") : no_candidates;
  std::set<std::string> seen;
  bool winner_listed = false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Reader cr(candidates[i], r.join("candidates[" + std::to_string(i) + "]"));
    CandidateResult c = read_candidate(cr, e.M, names);
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

// A JSON value built from SAX events: one entry, or one member of the document other than
// "entries", so that memory holds one of them at a time however long the file is.
class ValueBuilder {
 public:
  bool active() const { return active_; }

  void begin() {
    value_ = json();
    stack_.clear();
    active_ = true;
  }
  void key(std::string name) { key_ = std::move(name); }
  // A scalar; true when it was the whole value.
  bool scalar(json v) {
    place(std::move(v));
    return stack_.empty();
  }
  void open(json container) { stack_.push_back(place(std::move(container))); }
  // Closes the innermost object or array; true when that completed the value.
  bool close() {
    stack_.pop_back();
    return stack_.empty();
  }
  json take() {
    active_ = false;
    return std::move(value_);
  }

 private:
  // Puts `v` where the parser is: the value itself, the next array element or the member named
  // by the last key. Ancestors on the stack do not move when a child is added.
  json* place(json v) {
    if (stack_.empty()) {
      value_ = std::move(v);
      return &value_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  json value_;
  std::vector<json*> stack_;
  std::string key_;
  bool active_ = false;
};

// SAX handler of a whole document. Each element of "entries" is built, validated and handed on
// as soon as it is complete, then dropped; the other members are kept and checked at the end.
// Errors keep the priority the format gives them whatever the order of the members in the file
// (an export writes "entries" first): invalid JSON, then the document's shape, "format",
// "format_version", and only then the first bad entry.
class DocumentReader : public nlohmann::json_sax<json> {
 public:
  DocumentReader(NameCheck names, std::function<void(StoredEntry&&)> each)
      : each_(std::move(each)), names_check_(std::move(names)) {}

  bool null() override { return scalar(json(nullptr)); }
  bool boolean(bool v) override { return scalar(json(v)); }
  bool number_integer(number_integer_t v) override { return scalar(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(json(v)); }
  bool string(string_t& v) override { return scalar(json(std::move(v))); }
  bool binary(binary_t& v) override { return scalar(json::binary(v)); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    if (skipped_levels_ > 0) return true;
    if (builder_.active()) {
      builder_.key(std::move(name));
    } else {  // a member of the document
      if (name == "entries" && ++entries_keys_ == 2)
        first_bad_entry(InvalidArgument("entries", "appears twice in the document"));
      member_ = std::move(name);
    }
    return true;
  }

  [[noreturn]] bool parse_error(std::size_t, const std::string&,
                                const nlohmann::json::exception& e) override {
    // parse_error, and also out_of_range for numbers beyond double (found by the fuzzer).
    throw InvalidArgument("document", plain_json_error(e));
  }

  // The checks that need the whole document; returns the number of entries.
  std::size_t finish() {
    if (!root_is_object_) throw InvalidArgument("document", "must be a JSON object");
    const Reader root(members_, "");
    static const auto& format_pattern = *new std::regex(kJsonFormatName);
    root.text("format", format_pattern, std::string("\"").append(kJsonFormatName).append("\"").c_str());
    const auto version = root.integer("format_version", 0, std::numeric_limits<int>::max());
    if (version != kJsonFormatVersion && version != kFirstVersion)
      root.fail("format_version", "is " + std::to_string(version) + "; this build reads versions " +
                                      std::to_string(kFirstVersion) + " and " +
                                      std::to_string(kJsonFormatVersion));
    if (!entries_array_seen_) root.array("entries");  // missing, or not an array: says which
    if (bad_entry_) throw *bad_entry_;
    // Version 1 knew no precision (its entries are highest); version 2 names it in every entry.
    if (version == kFirstVersion && first_with_precision_)
      throw InvalidArgument(entry_path(*first_with_precision_) + ".precision",
                            "is not part of format version 1 (a document with precisions is "
                            "version " + std::to_string(kJsonFormatVersion) + ")");
    if (version != kFirstVersion && first_without_precision_)
      throw InvalidArgument(entry_path(*first_without_precision_) + ".precision", "is missing");
    return count_;
  }

 private:
  // Where the parser is, outside the values being built.
  enum class Level { outside, document, entries };

  bool scalar(json v) {
    if (skipped_levels_ > 0) return true;
    if (builder_.active()) {
      if (builder_.scalar(std::move(v))) deliver();
      return true;
    }
    if (level_ == Level::outside) {
      root_is_object_ = false;
      return true;
    }
    builder_.begin();
    builder_.scalar(std::move(v));
    deliver();
    return true;
  }

  bool open(json container) {
    if (skipped_levels_ > 0) {
      ++skipped_levels_;
    } else if (builder_.active()) {
      builder_.open(std::move(container));
    } else if (level_ == Level::outside) {
      if (container.is_object()) {
        level_ = Level::document;
      } else {  // only parsed further, to report invalid JSON before the wrong shape
        root_is_object_ = false;
        skipped_levels_ = 1;
      }
    } else if (level_ == Level::document && member_ == "entries" && container.is_array()) {
      level_ = Level::entries;
      entries_array_seen_ = true;
    } else {
      builder_.begin();
      builder_.open(std::move(container));
    }
    return true;
  }

  bool close() {
    if (skipped_levels_ > 0) {
      --skipped_levels_;
    } else if (builder_.active()) {
      if (builder_.close()) deliver();
    } else {
      level_ = level_ == Level::entries ? Level::document : Level::outside;
    }
    return true;
  }

  void deliver() {
    json value = builder_.take();
    if (level_ == Level::entries) {
      entry(value, count_++);
    } else {
      members_[member_] = std::move(value);
    }
  }

  static constexpr int kFirstVersion = 1;

  static std::string entry_path(std::size_t index) {
    return "entries[" + std::to_string(index) + "]";
  }

  void entry(const json& value, std::size_t index) {
    if (bad_entry_) return;  // the rest is only parsed
    StoredEntry e;
    try {
      const Reader er(value, entry_path(index));
      e = read_entry(er, names_check_);
      auto& first = er.has("precision") ? first_with_precision_ : first_without_precision_;
      if (!first) first = index;
      if (!new_key(e))
        er.fail("m", "this (device_key, m, n, k, problem_class, precision) appears twice in the file");
    } catch (const InvalidArgument& bad) {
      first_bad_entry(bad);
      return;
    }
    each_(std::move(e));
  }

  void first_bad_entry(const InvalidArgument& bad) {
    if (!bad_entry_) bad_entry_ = bad;
  }

  // False when the file had this entry's key before. Device keys and classes are few: each is
  // stored once, so a key costs about 100 bytes whatever the strings' lengths.
  bool new_key(const StoredEntry& e) {
    const auto id = [this](const std::string& text) {
      return names_.emplace(text, static_cast<int>(names_.size())).first->second;
    };
    return keys_.insert({id(e.device_key), e.M, e.N, e.K, id(e.problem_class),
                         static_cast<int>(e.precision)})
        .second;
  }

  std::function<void(StoredEntry&&)> each_;
  NameCheck names_check_;
  Level level_ = Level::outside;
  int skipped_levels_ = 0;
  bool root_is_object_ = true;
  std::string member_;
  json members_ = json::object();
  int entries_keys_ = 0;
  bool entries_array_seen_ = false;
  ValueBuilder builder_;
  std::size_t count_ = 0;
  std::optional<InvalidArgument> bad_entry_;
  std::map<std::string, int> names_;
  std::set<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int, int>> keys_;
  // The first entry with and without a "precision", checked against the version at the end.
  std::optional<std::size_t> first_with_precision_, first_without_precision_;
};

}  // namespace

std::size_t read_entries_json(std::istream& in, const NameCheck& names,
                              const std::function<void(StoredEntry&&)>& each) {
  DocumentReader reader(names, each);
  json::sax_parse(in, &reader);
  return reader.finish();
}

std::vector<StoredEntry> entries_from_json(const std::string& text, const NameCheck& names) {
  std::vector<StoredEntry> entries;
  DocumentReader reader(names, [&](StoredEntry&& e) { entries.push_back(std::move(e)); });
  json::sax_parse(text, &reader);
  reader.finish();
  return entries;
}

}  // namespace tilemm::cache
