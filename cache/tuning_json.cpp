#include "tuning_json.hpp"

#include <cmath>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tilemm/error.hpp"

namespace tilemm::cache {

using nlohmann::json;

std::string entries_to_json(const std::vector<StoredEntry>& entries) {
  std::ostringstream out;
  JsonEntriesWriter writer(out);
  for (const auto& e : entries) writer.add(e);
  writer.finish();
  return out.str();
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

using Reader = JsonFieldReader;

// A JSON value built from SAX events: one entry, or one member of the document other than
// "entries", so that memory holds one of them at a time however long the file is. Its size is
// bounded too: each value counts kValueWeight bytes plus the bytes of its string or key, and a
// value past kMaxEntryTextBytes of them is dropped half-built (too_large()), as the fleet's store
// refuses an entry's text past that size. A real entry, hundreds of candidates, is far below.
class ValueBuilder {
 public:
  bool active() const { return active_; }
  bool too_large() const { return weight_ > kMaxEntryTextBytes; }
  std::size_t depth() const { return stack_.size(); }

  void begin() {
    value_ = json();
    stack_.clear();
    active_ = true;
    weight_ = 0;
  }
  void key(std::string name) {
    weight_ += name.size();
    key_ = std::move(name);
  }
  // A scalar; true when it was the whole value.
  bool scalar(json v) {
    weight_ += kValueWeight + (v.is_string() ? v.get_ref<const std::string&>().size() : 0);
    place(std::move(v));
    return stack_.empty();
  }
  void open(json container) {
    weight_ += kValueWeight;
    stack_.push_back(place(std::move(container)));
  }
  // Drops the value being built, too large to keep.
  void drop() {
    value_ = json();
    stack_.clear();
    active_ = false;
  }
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

  static constexpr std::size_t kValueWeight = 16;  // about what a value costs in memory

  json value_;
  std::vector<json*> stack_;
  std::string key_;
  bool active_ = false;
  std::size_t weight_ = 0;
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
      if (builder_.too_large()) drop_too_large();
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
    root.text("format", [](const std::string& s) { return s == kJsonFormatName; },
              std::string("\"").append(kJsonFormatName).append("\"").c_str());
    const auto version = root.integer("format_version", 0, std::numeric_limits<int>::max());
    if (version < kFirstVersion || version > kJsonFormatVersion)
      root.fail("format_version", "is " + std::to_string(version) + "; this build reads versions " +
                                      std::to_string(kFirstVersion) + " to " +
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
    // Version 3 names the candidate set of every entry; the versions before it knew none.
    if (version < kSetVersion && first_with_set_)
      throw InvalidArgument(entry_path(*first_with_set_) + ".candidate_set",
                            "is not part of format version " + std::to_string(version) +
                                " (a document with candidate sets is version " +
                                std::to_string(kSetVersion) + ")");
    if (version >= kSetVersion && first_without_set_)
      throw InvalidArgument(entry_path(*first_without_set_) + ".candidate_set", "is missing");
    return count_;
  }

 private:
  // Where the parser is, outside the values being built.
  enum class Level { outside, document, entries };

  bool scalar(json v) {
    if (skipped_levels_ > 0) return true;
    if (builder_.active()) {
      if (builder_.scalar(std::move(v))) {
        deliver();
      } else if (builder_.too_large()) {
        drop_too_large();
      }
      return true;
    }
    if (level_ == Level::outside) {
      root_is_object_ = false;
      return true;
    }
    if (level_ == Level::document && !known_member()) return true;  // only parsed
    builder_.begin();
    builder_.scalar(std::move(v));
    if (builder_.too_large()) {
      drop_too_large();
    } else {
      deliver();
    }
    return true;
  }

  // The members a document of the format has: the others are parsed, never kept.
  bool known_member() const {
    return member_ == "entries" || member_ == "format" || member_ == "format_version";
  }

  // The value being built passed the size an entry may have: the rest of it is only parsed, and
  // an entry is refused as the first bad one (later, in the format's order of errors); a member
  // of the document is refused at once.
  void drop_too_large() {
    skipped_levels_ = static_cast<int>(builder_.depth());
    builder_.drop();
    const std::string limit = "is larger than " + std::to_string(kMaxEntryTextBytes >> 20) +
                              " MiB, more than an entry of the format can be";
    if (level_ == Level::entries) {
      first_bad_entry(InvalidArgument(entry_path(count_++), limit));
    } else {
      throw InvalidArgument(member_, limit);
    }
  }

  bool open(json container) {
    if (skipped_levels_ > 0) {
      ++skipped_levels_;
    } else if (builder_.active()) {
      builder_.open(std::move(container));
      if (builder_.too_large()) drop_too_large();
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
    } else if (level_ == Level::document && !known_member()) {
      skipped_levels_ = 1;  // only parsed
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
  static constexpr int kSetVersion = 3;  // the first with "candidate_set"

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
      auto& first_set = er.has("candidate_set") ? first_with_set_ : first_without_set_;
      if (!first_set) first_set = index;
      if (!new_key(e))
        er.fail("m", "this (device_key, m, n, k, problem_class, precision, candidate_set) "
                     "appears twice in the file");
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
                         static_cast<int>(e.precision), static_cast<int>(e.candidate_set)})
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
  std::set<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, int, int, int>> keys_;
  // The first entry with and without a "precision" and a "candidate_set", checked against the
  // version at the end.
  std::optional<std::size_t> first_with_precision_, first_without_precision_;
  std::optional<std::size_t> first_with_set_, first_without_set_;
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
