#include "preloaded.hpp"

#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "candidate_tables.hpp"
#include "json_entry.hpp"
#include "kernel_sources.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

namespace tilemm::cache {

std::vector<StoredEntry> read_preloaded(const std::vector<detail::EmbeddedTemplate>& files,
                                        const NameCheck& names) {
  std::vector<StoredEntry> out;
  for (const auto& file : files) {
    try {
      for (auto& e : entries_from_json(std::string(file.source), names)) {
        e.source = "preloaded";
        out.push_back(std::move(e));
      }
    } catch (const InvalidArgument& e) {
      detail::log(detail::LogLevel::warn, "preloaded cache " + std::string(file.file) +
                                              " skipped: " + e.what());
    }
  }
  return out;
}

namespace {

// The entries of `files`, read with `names`, and how long that took at debug level ("the preloaded
// <what> (<n> entries) read in <ms> ms"). Never destroyed: a background tuning thread may still
// read them while the process exits (src/dispatch/background_tuning.cpp stops it from an exit
// handler, which runs after the destructors of statics built later than it was registered).
const std::vector<StoredEntry>* read_for_the_process(
    const std::vector<detail::EmbeddedTemplate>& files, const std::string& what,
    const NameCheck& names) {
  return new std::vector<StoredEntry>(detail::timed_step(
      [&what](const std::vector<StoredEntry>& read) {
        return "the preloaded " + what + " (" + std::to_string(read.size()) + " entries) read";
      },
      [&] { return read_preloaded(files, names); }));
}

// The headers of each embedded file, file by file (none for a file that fails validation): read
// once per process, for preloaded_headers() and for finding each entry's text. Never destroyed,
// as above.
const std::vector<std::vector<StoredEntry>>& headers_by_file(const NameCheck& names) {
  static const auto& all = *new std::vector<std::vector<StoredEntry>>(detail::timed_step(
      [](const std::vector<std::vector<StoredEntry>>& read) {
        std::size_t entries = 0;
        for (const auto& file : read) entries += file.size();
        return "the preloaded results' keys (" + std::to_string(entries) + " entries) read";
      },
      [&] {
        std::vector<std::vector<StoredEntry>> read;
        for (const auto& file : detail::embedded_preloaded_headers())
          read.push_back(read_preloaded({file}, names));
        return read;
      }));
  return all;
}

}  // namespace

const std::vector<StoredEntry>& preloaded_entries(const NameCheck& names) {
  static const auto& all = *read_for_the_process(detail::embedded_preloaded(), "results", names);
  return all;
}

const std::vector<StoredEntry>& preloaded_headers(const NameCheck& names) {
  static const auto& all = *[&] {
    auto* headers = new std::vector<StoredEntry>();  // never destroyed, as above
    for (const auto& file : headers_by_file(names))
      headers->insert(headers->end(), file.begin(), file.end());
    return headers;
  }();
  return all;
}

const std::vector<StoredEntry>& preloaded_timed_entries(const NameCheck& names) {
  static const auto& all = *read_for_the_process(detail::embedded_preloaded_timed(),
                                                 "results' timed candidates", names);
  return all;
}

namespace {

bool same_key(const StoredEntry& a, const StoredEntry& b) {
  return a.device_key == b.device_key && a.M == b.M && a.N == b.N && a.K == b.K &&
         a.problem_class == b.problem_class && a.precision == b.precision &&
         a.candidate_set == b.candidate_set;
}

// The spans of `spans_text` ("<offset> <length>" a line), if there are `entries` of them and each
// is an object inside `document`; else none.
std::vector<EntrySpan> spans_in(std::string_view spans_text, std::string_view document,
                                std::size_t entries) {
  std::vector<EntrySpan> spans;
  std::istringstream lines{std::string(spans_text)};
  for (EntrySpan s; lines >> s.offset >> s.length;) {
    if (s.length < 2 || s.offset > document.size() || s.length > document.size() - s.offset ||
        document[s.offset] != '{' || document[s.offset + s.length - 1] != '}')
      return {};
    spans.push_back(s);
  }
  if (!lines.eof() || spans.size() != entries) return {};
  return spans;
}

// Where each preloaded entry stands in the embedded full files: its key (a header of
// headers_by_file) and its text.
struct EntryText {
  const StoredEntry* header;
  std::string_view text;
};

// Every entry's text, file by file: each file's headers beside the spans the build found, where
// both list as many entries. Once per process; never destroyed, as above.
const std::vector<EntryText>& entry_texts(const NameCheck& names) {
  static const auto& all = *[&] {
    auto* texts = new std::vector<EntryText>();
    const auto& full = detail::embedded_preloaded();
    const auto& headers = detail::embedded_preloaded_headers();
    const auto& spans = detail::embedded_preloaded_entry_spans();
    const auto& read = headers_by_file(names);
    if (headers.size() != full.size() || spans.size() != full.size()) return texts;
    for (std::size_t f = 0; f < full.size(); ++f) {
      if (headers[f].file != full[f].file || spans[f].file != full[f].file) continue;
      const auto file_spans = spans_in(spans[f].source, full[f].source, read[f].size());
      for (std::size_t i = 0; i < file_spans.size(); ++i)
        texts->push_back(
            {&read[f][i], full[f].source.substr(file_spans[i].offset, file_spans[i].length)});
    }
    return texts;
  }();
  return all;
}

}  // namespace

std::optional<StoredEntry> preloaded_entry_alone(const StoredEntry& header,
                                                 const NameCheck& names) {
  for (const EntryText& t : entry_texts(names)) {
    if (!same_key(*t.header, header)) continue;
    try {
      StoredEntry e = entry_from_json_text(t.text, names);
      if (!same_key(e, header) || e.winner != header.winner) return std::nullopt;
      e.source = "preloaded";
      return e;
    } catch (const InvalidArgument&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<StoredEntry> preloaded_with_candidates(const StoredEntry& header,
                                                     const NameCheck& names) {
  static std::mutex mutex;
  static auto& read = *new std::vector<StoredEntry>();  // never destroyed, as above
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const auto& e : read)
      if (same_key(e, header)) return e;
  }
  std::optional<StoredEntry> entry = preloaded_entry_alone(header, names);
  if (!entry) {
    for (const auto& e : preloaded_entries(names))
      if (same_key(e, header)) entry = e;
    if (!entry) return std::nullopt;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  read.push_back(*entry);
  return entry;
}

bool preloaded_applies(const StoredEntry& e, const std::string& device_key, const std::string& arch,
                       const BuildVersions& running) {
  return (e.device_key == device_key || e.arch == arch) && !is_stale(e, running);
}

std::optional<StoredEntry> find_preloaded(const std::vector<StoredEntry>& entries,
                                          const std::string& device_key, const std::string& arch,
                                          std::int64_t M, std::int64_t N, std::int64_t K,
                                          const std::string& problem_class,
                                          const BuildVersions& running, Precision precision,
                                          CandidateSet set) {
  const StoredEntry* same_arch = nullptr;
  for (const auto& e : entries) {
    if (e.M != M || e.N != N || e.K != K || e.problem_class != problem_class ||
        e.precision != precision || e.candidate_set != set ||
        !preloaded_applies(e, device_key, arch, running))
      continue;
    if (e.device_key == device_key) return e;
    if (same_arch == nullptr) same_arch = &e;
  }
  if (same_arch != nullptr) return *same_arch;
  return std::nullopt;
}

}  // namespace tilemm::cache
