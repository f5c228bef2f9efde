#include "candidate_tables.hpp"

#include <cstddef>
#include <optional>

namespace tilemm::cache {
namespace {

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view text, std::size_t at) {
  while (at < text.size() && is_json_space(text[at])) ++at;
  return at;
}

// The index just past the string whose opening quote is at `open`; nullopt if it never ends.
std::optional<std::size_t> end_of_string(std::string_view text, std::size_t open) {
  for (std::size_t at = open + 1; at < text.size(); ++at) {
    if (text[at] == '\\') {
      ++at;  // the escaped character, a quote or a backslash included
    } else if (text[at] == '"') {
      return at + 1;
    }
  }
  return std::nullopt;
}

// The index of the bracket that closes the array or object whose '[' or '{' is at `open`; nullopt
// if the brackets inside do not match or it never closes.
std::optional<std::size_t> close_of(std::string_view text, std::size_t open) {
  std::string nesting(1, text[open]);
  for (std::size_t at = open + 1; at < text.size(); ++at) {
    switch (text[at]) {
      case '"': {
        const auto end = end_of_string(text, at);
        if (!end) return std::nullopt;
        at = *end - 1;
        break;
      }
      case '[':
      case '{':
        nesting.push_back(text[at]);
        break;
      case ']':
      case '}':
        if (nesting.back() != (text[at] == ']' ? '[' : '{')) return std::nullopt;
        nesting.pop_back();
        if (nesting.empty()) return at;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string without_candidate_tables(std::string_view document) {
  std::string out;
  std::size_t copied = 0;  // document[0, copied) is in `out`
  // The open objects and arrays, outermost first; an entry is an object in the root's "entries".
  std::string nesting;
  bool in_entries = false;  // the root's member being read is "entries"
  for (std::size_t at = 0; at < document.size(); ++at) {
    const char c = document[at];
    if (c == '[' || c == '{') {
      nesting.push_back(c);
    } else if (c == ']' || c == '}') {
      if (nesting.empty() || nesting.back() != (c == ']' ? '[' : '{')) break;  // the reader says
      nesting.pop_back();
    } else if (c == '"') {
      const auto end = end_of_string(document, at);
      if (!end) break;
      const std::string_view text = document.substr(at + 1, *end - at - 2);
      const std::size_t colon = skip_space(document, *end);
      const bool is_key = colon < document.size() && document[colon] == ':';
      at = *end - 1;
      if (!is_key) continue;
      if (nesting == "{") {
        in_entries = text == "entries";
      } else if (in_entries && nesting == "{[{" && text == "candidates") {
        const std::size_t open = skip_space(document, colon + 1);
        if (open >= document.size() || document[open] != '[') continue;  // the reader says
        const auto close = close_of(document, open);
        if (!close) break;
        out.append(document, copied, open + 1 - copied);
        copied = *close;
        at = *close;
      }
    }
  }
  out.append(document, copied, std::string_view::npos);
  return out;
}

std::vector<EntrySpan> entry_spans(std::string_view document) {
  std::vector<EntrySpan> spans;
  std::string nesting;      // as in without_candidate_tables
  bool in_entries = false;  // the root's member being read is "entries"
  for (std::size_t at = 0; at < document.size(); ++at) {
    const char c = document[at];
    if (c == '{' && in_entries && nesting == "{[") {
      const auto close = close_of(document, at);
      if (!close) return {};
      spans.push_back({at, *close + 1 - at});
      at = *close;
    } else if (c == '[' || c == '{') {
      nesting.push_back(c);
    } else if (c == ']' || c == '}') {
      if (nesting.empty() || nesting.back() != (c == ']' ? '[' : '{')) return {};
      nesting.pop_back();
    } else if (c == '"') {
      const auto end = end_of_string(document, at);
      if (!end) return {};
      const std::size_t colon = skip_space(document, *end);
      if (nesting == "{" && colon < document.size() && document[colon] == ':')
        in_entries = document.substr(at + 1, *end - at - 2) == "entries";
      at = *end - 1;
    }
  }
  if (!nesting.empty()) return {};
  return spans;
}

}  // namespace tilemm::cache
