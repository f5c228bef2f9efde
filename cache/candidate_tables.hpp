// The candidate tables of a tuning JSON document (docs/cache-format.md), removed from its text
// without parsing them. The build runs it on the preloaded files (cmake/preloaded_copy.cpp)
// and embeds the result beside them, so that a process reads the preloaded results' winners (a
// few hundred bytes an entry) without reading every candidate's timing (most of the file). The
// same scan finds where each entry stands, so that an autotune() parses the one it returns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tilemm::cache {

// `document` with the value of every entry's "candidates" member (an object of the "entries"
// array of the root object) replaced by an empty array; everything else is copied unchanged, so
// the result reads (entries_from_json) as the same entries without their candidates.
// It parses no value: one linear scan that tracks strings (with their escapes) and the nesting
// of objects and arrays. Text it cannot follow (an unterminated string, brackets that do not
// match) is left as it is from there on, so that the JSON reader reports it as it would in the
// full document. Tokens inside a removed table (numbers, literals, commas) are not checked: a
// table whose structure is sound but whose content is not valid JSON is removed all the same.
// A key spelled with escapes ("candid\u0061tes") is not recognized; its table is kept.
// Never throws except std::bad_alloc. Cost: linear in the document's size, allocates the result.
std::string without_candidate_tables(std::string_view document);

// Where each entry (an object of the root's "entries" array) stands in `document`.
struct EntrySpan {
  std::size_t offset = 0, length = 0;
};
// The entries' spans in order, found by the same scan; empty where the scan cannot follow the
// text to its end (the JSON reader then says what is wrong). Never throws except std::bad_alloc.
// Cost: linear in the document's size.
std::vector<EntrySpan> entry_spans(std::string_view document);

}  // namespace tilemm::cache
