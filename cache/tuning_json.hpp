// The JSON exchange format of tuning results (docs/cache-format.md): export, and an import that
// validates every field before anything is applied.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuning_store.hpp"

namespace tilemm::cache {

constexpr const char* kJsonFormatName = "tilemm-tuning";
constexpr int kJsonFormatVersion = 1;

// One candidate's fields as the format writes them (also the core of tilemm-tune --json).
nlohmann::json candidate_to_json(const CandidateResult& c);

// The JSON document of `entries` (pretty-printed, stable key order).
std::string entries_to_json(const std::vector<StoredEntry>& entries);

// Parses and validates a whole document. Throws tilemm::InvalidArgument whose argument() is the
// path of the first bad field ("entries[2].candidates[0].median_ms") and whose message says what
// was expected. Returns the entries with source as written in the file.
std::vector<StoredEntry> entries_from_json(const std::string& text);

}  // namespace tilemm::cache
