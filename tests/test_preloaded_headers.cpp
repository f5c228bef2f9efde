// The preloaded entries without their candidate tables (cache/preloaded.hpp, preloaded_headers)
// and the text scan that removes the tables (cache/candidate_tables.hpp): the same entries as the
// full read, minus candidates, for the shipped files and for documents with tricky strings.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "candidate_tables.hpp"
#include "kernel_sources.hpp"
#include "preloaded.hpp"
#include "row_split.hpp"
#include "stored_entry_check.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

namespace tilemm::cache {
namespace {

using nlohmann::json;

using testing::without_candidates;

void expect_same_minus_candidates(const std::vector<StoredEntry>& headers,
                                  const std::vector<StoredEntry>& full) {
  ASSERT_EQ(headers.size(), full.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    EXPECT_TRUE(headers[i].candidates.empty()) << i;
    testing::expect_same_entry(headers[i], without_candidates(full[i]), testing::CandidateOrder::same);
  }
}

TEST(PreloadedHeaders, AreTheShippedEntriesMinusTheirCandidates) {
  const auto& full = preloaded_entries(detail::why_not_a_known_name);
  const auto& headers = preloaded_headers(detail::why_not_a_known_name);
  ASSERT_FALSE(full.empty());
  std::size_t tables = 0;
  for (const auto& e : full) tables += e.candidates.empty() ? 0 : 1;
  EXPECT_GT(tables, 0u) << "the shipped files hold candidate tables, which the headers drop";
  expect_same_minus_candidates(headers, full);
  // File by file: the build embedded what the scan makes of each shipped file, under its name,
  // and a file skipped by one read would be skipped by the other.
  const auto& files = detail::embedded_preloaded();
  const auto& stripped = detail::embedded_preloaded_headers();
  ASSERT_EQ(stripped.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE(std::string(files[i].file));
    EXPECT_EQ(stripped[i].file, files[i].file);
    EXPECT_EQ(stripped[i].source, without_candidate_tables(files[i].source));
    EXPECT_LT(stripped[i].source.size(), files[i].source.size());
    expect_same_minus_candidates(read_preloaded({stripped[i]}, detail::why_not_a_known_name),
                                 read_preloaded({files[i]}, detail::why_not_a_known_name));
  }
}

// An entry whose strings hold what a careless scan would take for structure: brackets, braces,
// quotes (escaped), backslashes, the word "candidates" as a value and as a deeper key.
json tricky_entry(std::int64_t m) {
  StoredEntry s;
  s.device_key = "NVIDIA \"H200\" [x] {y} \\|sm_90|132sm|143771MiB";
  s.arch = "sm_90";
  s.M = m;
  s.N = 64;
  s.K = 32;
  s.problem_class = "a4-dense";
  s.winner = "tiled_t16_p0";
  s.median_ms = 0.5;
  s.tuned_at = "2026-11-29T10:11:12Z";
  s.tilemm_version = "0.1.0";
  s.versions = {"00112233aabbccdd", 13000, 13000};
  s.source = "preloaded";
  CandidateResult win;
  win.variant = "tiled_t16_p0";
  win.stats = {0.5, 0.45, 0.01, 31};
  win.reason = "] } \"candidates\": [ \\\" \\";
  CandidateResult lost;
  lost.variant = "naive";
  lost.status = CandidateStatus::pruned;
  lost.reason = "[[[{{{\"\\\\\"";
  lost.stats = {4.0, 3.5, 0.0, 5};
  s.candidates = {win, lost};
  json doc = json::parse(entries_to_json({s}));
  json entry = doc["entries"][0];
  entry["candidates"][0]["candidates"] = json::array({"]", "[", {{"candidates", "}"}}});
  return entry;
}

TEST(CandidateTables, TrickyStringsAreCopiedAndOnlyTheEntriesTablesRemoved) {
  json doc = json::object();
  doc["comment"] = "\"entries\": [{\"candidates\": [";  // a string that looks like the format
  doc["candidates"] = json::array({1, 2, 3});             // not an entry's: kept
  doc["entries"] = json::array({tricky_entry(512), tricky_entry(1024)});
  doc["format"] = kJsonFormatName;
  doc["format_version"] = kJsonFormatVersion;
  for (const int indent : {-1, 2}) {  // compact and pretty-printed
    SCOPED_TRACE(indent);
    const std::string text = doc.dump(indent);
    const std::string stripped = without_candidate_tables(text);
    EXPECT_LT(stripped.size(), text.size());
    json expected = doc;
    for (auto& e : expected["entries"]) e["candidates"] = json::array();
    EXPECT_EQ(json::parse(stripped), expected);  // everything else exactly as it was

    const auto full = entries_from_json(text, detail::why_not_a_known_name);
    ASSERT_EQ(full.size(), 2u);
    EXPECT_EQ(full[0].candidates.size(), 2u);
    EXPECT_EQ(full[0].candidates[0].reason, "] } \"candidates\": [ \\\" \\");
    expect_same_minus_candidates(entries_from_json(stripped, detail::why_not_a_known_name), full);
  }
}

// Each entry's span is the text of that entry, whatever its strings hold, compact or not.
TEST(CandidateTables, EntrySpansAreTheTextsOfTheEntries) {
  json doc = json::object();
  doc["comment"] = "\"entries\": [{\"candidates\": [";
  doc["entries"] = json::array({tricky_entry(512), tricky_entry(1024), tricky_entry(7)});
  doc["format"] = kJsonFormatName;
  doc["format_version"] = kJsonFormatVersion;
  for (const int indent : {-1, 2}) {
    SCOPED_TRACE(indent);
    const std::string text = doc.dump(indent);
    const auto spans = entry_spans(text);
    ASSERT_EQ(spans.size(), 3u);
    for (std::size_t i = 0; i < spans.size(); ++i)
      EXPECT_EQ(json::parse(text.substr(spans[i].offset, spans[i].length)), doc["entries"][i]);
  }
  for (const char* none : {"", "[]", "{\"entries\": 5}", "{\"entries\": []}",
                           "{\"other\": [{\"m\": 1}]}", "{\"entries\": [[{\"m\": 1}]]}"})
    EXPECT_TRUE(entry_spans(none).empty()) << none;
  // Text the scan cannot follow to its end gives no spans: the full read then says what is wrong.
  for (const char* broken : {"{\"entries\": [{\"m\": 1}", "{\"entries\": [{\"m\": \"1}]}",
                             "{\"entries\": [{\"m\": 1]]}"})
    EXPECT_TRUE(entry_spans(broken).empty()) << broken;
}

// An autotune() of a shipped shape reads its entry alone: the same entry, candidates and all, as
// the read of the whole file gives, for every shipped entry; the build's spans are those of the
// scan; a key that is not shipped has none.
TEST(PreloadedHeaders, AnEntryReadAloneIsTheEntryOfTheWholeFile) {
  const auto& full = preloaded_entries(detail::why_not_a_known_name);
  const auto& headers = preloaded_headers(detail::why_not_a_known_name);
  ASSERT_EQ(headers.size(), full.size());
  for (std::size_t i = 0; i < full.size(); ++i) {
    SCOPED_TRACE(full[i].winner);
    const auto alone = preloaded_entry_alone(headers[i], detail::why_not_a_known_name);
    ASSERT_TRUE(alone.has_value());
    testing::expect_same_entry(*alone, full[i], testing::CandidateOrder::same);
    const auto served = preloaded_with_candidates(headers[i], detail::why_not_a_known_name);
    ASSERT_TRUE(served.has_value());
    testing::expect_same_entry(*served, full[i], testing::CandidateOrder::same);
  }
  StoredEntry missing = headers.front();
  missing.M += 1;
  EXPECT_FALSE(preloaded_entry_alone(missing, detail::why_not_a_known_name).has_value());
  EXPECT_FALSE(preloaded_with_candidates(missing, detail::why_not_a_known_name).has_value());
  // A header whose winner its entry's text does not name is not that entry.
  StoredEntry other_winner = headers.front();
  other_winner.winner = "naive";
  EXPECT_FALSE(preloaded_entry_alone(other_winner, detail::why_not_a_known_name).has_value());
  const auto& files = detail::embedded_preloaded();
  const auto& spans = detail::embedded_preloaded_entry_spans();
  ASSERT_EQ(spans.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string expected;
    for (const auto& s : entry_spans(files[i].source))
      expected += std::to_string(s.offset) + " " + std::to_string(s.length) + "\n";
    EXPECT_EQ(spans[i].file, files[i].file);
    EXPECT_EQ(spans[i].source, expected);
  }
}

TEST(CandidateTables, ADocumentWithoutTablesOrEntriesIsUnchanged) {
  for (const char* text : {"", "[]", "{\"entries\": 5}", "\"x\"",
                           "{\"entries\": [{\"winner\": \"a\", \"candidates\": 7}]}",
                           "{\"entries\": [[{\"candidates\": [1]}]]}",
                           "{\"other\": [{\"candidates\": [1]}]}", "{\"entries\": [{\"c\": [1]}]}"})
    EXPECT_EQ(without_candidate_tables(text), text);
}

// Text the scan cannot follow is left for the JSON reader, which rejects it as it rejects the
// whole document: both reads skip such a file.
TEST(CandidateTables, BrokenStructureInATableIsLeftForTheReaderToReject) {
  const std::string valid = json{{"entries", json::array({tricky_entry(512)})},
                                 {"format", kJsonFormatName},
                                 {"format_version", kJsonFormatVersion}}
                                .dump();
  const std::string key = "\"candidates\":[";
  ASSERT_NE(valid.find(key), std::string::npos);
  const std::size_t table = valid.find(key) + key.size();
  for (const std::string& broken : {valid.substr(0, table) + "{\"a\": ]" + valid.substr(table),
                                   valid.substr(0, table) + "\"never closed",
                                   valid.substr(0, table) + "[[[["}) {
    EXPECT_THROW(entries_from_json(broken, detail::why_not_a_known_name), InvalidArgument);
    EXPECT_THROW(entries_from_json(without_candidate_tables(broken), detail::why_not_a_known_name),
                 InvalidArgument);
  }
}

// Preloaded files of these names and texts, as they are and with their tables removed. The views
// point into `texts`, `names` and `stripped`, which must outlive them.
struct Files {
  std::vector<std::string> names, texts, stripped;
  std::vector<detail::EmbeddedTemplate> full, headers;
  Files(std::vector<std::string> file_names, std::vector<std::string> file_texts)
      : names(std::move(file_names)), texts(std::move(file_texts)) {
    for (const auto& text : texts) stripped.push_back(without_candidate_tables(text));
    for (std::size_t i = 0; i < texts.size(); ++i) {
      full.push_back({names[i], texts[i], ""});
      headers.push_back({names[i], stripped[i], ""});
    }
  }
};

TEST(PreloadedHeaders, AFileThatFailsValidationIsSkippedWithAWarningByBothReads) {
  const auto doc = [](json entry) {
    return json{{"entries", json::array({std::move(entry)})},
                {"format", kJsonFormatName},
                {"format_version", kJsonFormatVersion}}
        .dump(2);
  };
  json bad_arch = tricky_entry(256);
  bad_arch["arch"] = "sm_80";  // not the one in its device key
  json unknown_winner = tricky_entry(128);
  unknown_winner["winner"] = "warptile_of_a_newer_build";
  const std::vector<std::string> texts = {doc(tricky_entry(512)), doc(bad_arch), "{\"entries\": [",
                                          doc(unknown_winner)};
  const std::vector<std::string> names = {"good.json", "bad-arch.json", "not-json.json",
                                          "unknown-winner.json"};
  const Files files(names, texts);
  for (const bool with_tables : {true, false}) {
    ::testing::internal::CaptureStderr();
    const auto entries =
        read_preloaded(with_tables ? files.full : files.headers, detail::why_not_a_known_name);
    const std::string warnings = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].M, 512);
    EXPECT_EQ(entries[0].source, "preloaded");
    EXPECT_EQ(entries[0].candidates.empty(), !with_tables);
    for (const char* name : {"bad-arch.json", "not-json.json", "unknown-winner.json"})
      EXPECT_NE(warnings.find(std::string("preloaded cache ") + name + " skipped: "), std::string::npos)
          << name << " in: " << warnings;
    EXPECT_EQ(warnings.find("good.json"), std::string::npos) << warnings;
  }
}

// The limit of reading without the tables, pinned so that it stays a known one: a bad candidate
// (here an unknown variant) makes the full read skip the file, while the headers keep it. The
// shipped files cannot be like that (PreloadedHeaders.AreTheShippedEntriesMinusTheirCandidates).
TEST(PreloadedHeaders, OnlyTheFullReadChecksTheCandidateTables) {
  json entry = tricky_entry(512);
  entry["candidates"][1]["variant"] = "warptile_of_a_newer_build";
  const std::string text = json{{"entries", json::array({entry})},
                                {"format", kJsonFormatName},
                                {"format_version", kJsonFormatVersion}}
                               .dump();
  const Files files({"bad-candidate.json"}, {text});
  ::testing::internal::CaptureStderr();
  EXPECT_TRUE(read_preloaded(files.full, detail::why_not_a_known_name).empty());
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("bad-candidate.json skipped"),
            std::string::npos);
  EXPECT_EQ(read_preloaded(files.headers, detail::why_not_a_known_name).size(), 1u);
}

// Not a pass/fail timing: prints what each read of the embedded files costs on this machine (the
// first gemm() of a preloaded shape pays the read of the headers).
TEST(PreloadedHeaders, PrintsTheTimeOfEachRead) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  };
  std::size_t bytes = 0, header_bytes = 0;
  for (const auto& file : detail::embedded_preloaded()) bytes += file.source.size();
  for (const auto& file : detail::embedded_preloaded_headers()) header_bytes += file.source.size();
  auto start = Clock::now();
  const auto headers = read_preloaded(detail::embedded_preloaded_headers(), detail::why_not_a_known_name);
  const double headers_ms = ms_since(start);
  start = Clock::now();
  for (const auto& file : detail::embedded_preloaded()) (void)without_candidate_tables(file.source);
  const double scan_ms = ms_since(start);
  start = Clock::now();
  const auto full = read_preloaded(detail::embedded_preloaded(), detail::why_not_a_known_name);
  const double full_ms = ms_since(start);
  EXPECT_EQ(headers.size(), full.size());
  std::cout << "preloaded entries: " << headers.size() << "\n"
            << "  without candidates (" << header_bytes << " bytes embedded): " << headers_ms
            << " ms\n"
            << "  with candidates (" << bytes << " bytes): " << full_ms << " ms\n"
            << "  removing the tables, done at build time: " << scan_ms << " ms\n";
}

}  // namespace
}  // namespace tilemm::cache
