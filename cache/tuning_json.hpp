// The JSON exchange format of tuning results (docs/cache-format.md): export, and an import that
// validates every field before anything is applied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "json_entry.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

constexpr const char* kJsonFormatName = "tilemm-tuning";
// Version 2 added each entry's "precision", version 3 its "candidate_set" (candidate_set.hpp).
// Older documents are still read: a version 1 entry as precision highest, an entry of either with
// the set its names show (inferred_candidate_set).
constexpr int kJsonFormatVersion = 3;

// The JSON document of `entries` (pretty-printed, stable key order), as JsonEntriesWriter
// (json_entry.hpp) writes it.
std::string entries_to_json(const std::vector<StoredEntry>& entries);

// Reads and validates a document from `in` one entry at a time, calling `each` with every valid
// entry in file order (source as written in the file), and returns how many there were. Memory
// holds one entry at a time, plus about 100 bytes per entry for the check that no key appears
// twice, whatever the size of the file; the time is linear in it. Throws tilemm::InvalidArgument
// whose argument() is the path of the first bad field ("entries[2].candidates[0].median_ms", or
// "document" for text that is not JSON) and whose message says what was expected. The fields
// outside "entries" may come after them in the file, so `each` may have been called for some
// entries when the document turns out bad: a caller that stores them must be able to undo that
// (tilemm-tune --import reads the file once to validate it, then again to store it in one
// transaction). Errors of `each` propagate unchanged.
std::size_t read_entries_json(std::istream& in, const NameCheck& names,
                              const std::function<void(StoredEntry&&)>& each);

// The same for a document in memory; returns all its entries. Throws as read_entries_json.
std::vector<StoredEntry> entries_from_json(const std::string& text, const NameCheck& names);

}  // namespace tilemm::cache
