// One entry of the JSON exchange format (docs/cache-format.md): written, and read with every
// field validated. The document format (tuning_json.hpp) is a list of these; the fleet's Redis
// store (redis_store.hpp) holds one per key. Both read through read_entry, so a value from Redis
// is validated exactly like an entry of an imported file.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "json_fields.hpp"
#include "row_split.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

// Whether `name`, standing in an entry as `where` says (its rows, precision and set, and whether
// it is the winner or a candidate timed in full), is one the running build can serve there:
// empty when it is, else why not ("is not a variant this build knows: ..."). The cache does not
// know the kernels' vocabulary (variants, plans, providers, the precision each computes at); the
// layer that does passes this check in, and every entry read through it names only what the
// build can run, consistently with the entry's precision and candidate set.
using NameCheck = std::function<std::string(const std::string& name, const detail::StoredName& where)>;

// `value` as JSON text, indented as nlohmann's dump() takes `indent` (-1: on one line). JSON text
// must be UTF-8, and a reason or a path may quote the system's bytes, which need not be: those
// are written as U+FFFD. Every JSON that tilemm writes (an export, a fleet value, tilemm-tune
// --json) goes through it.
std::string json_text(const nlohmann::json& value, int indent = -1);

// One candidate's fields as the format writes them (also the core of tilemm-tune --json).
nlohmann::json candidate_to_json(const CandidateResult& c);

// One entry as the format writes it.
nlohmann::json entry_to_json(const StoredEntry& e);

// Reads and validates one entry at `r`. "precision" and "candidate_set" are optional here
// (format version 1 lacks both, version 2 the set; the document reader checks which version the
// document is); an entry without a set is given inferred_candidate_set's (candidate_set.hpp). Throws InvalidArgument naming the
// first bad field.
StoredEntry read_entry(const JsonFieldReader& r, const NameCheck& names);

// One entry from its JSON text (a value of the Redis store), validated by read_entry with
// "precision" required; "candidate_set" may be absent (a value of a build before it), as in
// read_entry. At most kMaxEntryTextBytes are parsed. Throws InvalidArgument whose
// argument() is "entry" or the bad field's path under it. Cost: linear in the text.
inline constexpr std::size_t kMaxEntryTextBytes = std::size_t{4} << 20;
StoredEntry entry_from_json_text(std::string_view text, const NameCheck& names);

// Writes a document of the format entry by entry, so that an export holds one entry in memory at
// a time. The output is the same text entries_to_json makes. finish() closes the document; a
// writer destroyed before it leaves an incomplete document (the caller removes the file).
class JsonEntriesWriter {
 public:
  explicit JsonEntriesWriter(std::ostream& out);
  void add(const StoredEntry& e);
  void finish();
  std::size_t count() const { return count_; }

 private:
  std::ostream& out_;
  std::size_t count_ = 0;
  bool finished_ = false;
};

}  // namespace tilemm::cache
