// The JSON exchange format: round trip, every malformed case rejected with the field named,
// and the preloaded lookup order.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>

#include <set>

#include <algorithm>

#include "fake_vendor_provider.hpp"
#include "kernel_sources.hpp"
#include "row_split.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "sample_entry.hpp"
#include "shape_key.hpp"
#include "stored_entry_check.hpp"
#include "tilemm/device.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

namespace tilemm::cache {
namespace {

using nlohmann::json;

// Entries of M x 2M x 3 on the device of `key`.
StoredEntry entry(const std::string& key, std::int64_t m, const std::string& winner = "tiled_t32_p0") {
  return testing::sample_entry(m, 2 * m, 3, winner, key);
}

const std::string kH200 = testing::kH200Key;

TEST(TuningJson, ExportThenImportGivesBackTheSameEntries) {
  const std::vector<StoredEntry> entries = {entry(kH200, 512), entry(kH200, 1024, "tiled_t16_p1"),
                                            entry("NVIDIA A100|sm_80|108sm|40326MiB", 64)};
  const auto back = entries_from_json(entries_to_json(entries), detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i)
    testing::expect_same_entry(back[i], entries[i], testing::CandidateOrder::same);
  EXPECT_TRUE(entries_from_json(entries_to_json({}), detail::why_not_a_known_name).empty());
}

// A reason may quote a path or a system message in bytes that are not UTF-8: the export still
// writes a valid document, with U+FFFD in their place, instead of failing halfway.
TEST(TuningJson, BytesThatAreNotUtf8AreWrittenAsReplacementCharacters) {
  StoredEntry e = entry(kH200, 512);
  ASSERT_GE(e.candidates.size(), 2u);
  e.candidates[1].reason = "cannot open '/data/caf\xe9': no such file";
  std::ostringstream out;
  JsonEntriesWriter writer(out);
  writer.add(e);
  writer.finish();
  const json doc = json::parse(out.str());
  EXPECT_EQ(doc["entries"][0]["candidates"][1]["reason"], "cannot open '/data/caf\xef\xbf\xbd': no such file");
  EXPECT_EQ(entries_from_json(out.str(), detail::why_not_a_known_name).size(), 1u);
}

struct Malformed {
  const char* what;
  std::function<void(json&)> mutate;
  std::string field;  // the argument() the error must name
};

std::string rejected_field(const std::string& text) {
  try {
    entries_from_json(text, detail::why_not_a_known_name);
  } catch (const InvalidArgument& e) {
    return e.argument();
  }
  return "<accepted>";
}

// Renames the winner of an entry and its candidate together.
void set_winner(json& entry, const std::string& name) {
  entry["winner"] = name;
  entry["candidates"][0]["variant"] = name;
}

// Format 2 names each entry's precision; entries that differ only in it are distinct keys.
TEST(TuningJson, PrecisionIsPartOfEachEntryAndOfItsKey) {
  StoredEntry high = entry(kH200, 512, "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp3_v4");
  high.precision = Precision::high;
  StoredEntry medium = entry(kH200, 512, "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp1_v4");
  medium.precision = Precision::medium;
  const std::vector<StoredEntry> entries = {entry(kH200, 512), high, medium};
  const std::string text = entries_to_json(entries);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["format_version"], kJsonFormatVersion);
  EXPECT_EQ(doc["entries"][1]["precision"], "high");
  const auto back = entries_from_json(text, detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 3u);
  for (std::size_t i = 0; i < entries.size(); ++i)
    testing::expect_same_entry(back[i], entries[i], testing::CandidateOrder::same);
}

// A file exported before precision modes (format 1, no "precision") still imports, every entry
// as precision highest: what its FP32 kernels computed.
TEST(TuningJson, AFormatOneDocumentReadsAsPrecisionHighest) {
  json doc = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024)}));
  doc["format_version"] = 1;
  for (auto& e : doc["entries"]) {
    e.erase("precision");
    e.erase("candidate_set");
  }
  const auto back = entries_from_json(doc.dump(), detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 2u);
  for (const auto& e : back) EXPECT_EQ(e.precision, Precision::highest);
  StoredEntry own_kernels = entry(kH200, 1024);  // no vendor candidate among its names
  own_kernels.candidate_set = CandidateSet::own_only;
  testing::expect_same_entry(back[1], own_kernels, testing::CandidateOrder::same);
}

// Format 3 names the candidate set of each entry; entries that differ only in it are distinct
// keys, and both come back with their sets.
TEST(TuningJson, TheCandidateSetIsPartOfEachEntryAndOfItsKey) {
  StoredEntry own = entry(kH200, 512, "naive");
  own.candidates[1].variant = "tiled_t32_p0";
  own.candidate_set = CandidateSet::own_only;
  const std::vector<StoredEntry> entries = {entry(kH200, 512), own};
  const std::string text = entries_to_json(entries);
  const json doc = json::parse(text);
  EXPECT_EQ(doc["entries"][0]["candidate_set"], "with_vendor");
  EXPECT_EQ(doc["entries"][1]["candidate_set"], "own_only");
  const auto back = entries_from_json(text, detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 2u);
  for (std::size_t i = 0; i < entries.size(); ++i)
    testing::expect_same_entry(back[i], entries[i], testing::CandidateOrder::same);
}

// A file exported before candidate sets (format 2) still imports: an entry whose winner or a
// candidate is a vendor's was tuned with vendor candidates, any other with own kernels only, so
// that it is never served where vendor candidates would have been timed.
TEST(TuningJson, AFormatTwoEntryReadsWithTheSetItsNamesShow) {
  detail::register_candidate_provider(std::make_unique<testing::FakeVendorProvider>());
  struct Unregister {
    ~Unregister() { detail::unregister_candidate_provider("fakevendor"); }
  } unregister;
  StoredEntry timed_with_vendor = entry(kH200, 512);
  timed_with_vendor.candidates[1].variant = "fakevendor_a1";
  StoredEntry vendor_winner = entry(kH200, 1024, "fakevendor_a2");
  json doc = json::parse(entries_to_json({timed_with_vendor, vendor_winner, entry(kH200, 2048)}));
  doc["format_version"] = 2;
  for (auto& e : doc["entries"]) e.erase("candidate_set");
  const auto back = entries_from_json(doc.dump(), detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].candidate_set, CandidateSet::with_vendor);
  EXPECT_EQ(back[1].candidate_set, CandidateSet::with_vendor);
  EXPECT_EQ(back[2].candidate_set, CandidateSet::own_only);
}

// A row-split plan (src/core/row_split.hpp) is a winner and a candidate like a variant.
TEST(TuningJson, ARowSplitPlanIsAWinnerLikeAVariant) {
  StoredEntry plan = entry(kH200, 3000, "rowsplit_h2816");
  plan.candidates[0].reason = "rows 0-2815: warptile_x; rows 2816-2999: splitk_y";
  const auto back = entries_from_json(entries_to_json({plan}), detail::why_not_a_known_name);
  ASSERT_EQ(back.size(), 1u);
  testing::expect_same_entry(back[0], plan, testing::CandidateOrder::same);
}

// The cache knows no kernel names itself: whether a winner or a candidate is one the build can
// serve is the injected check's answer, with its reason, for every name of every entry, told
// where the name stands: the entry's rows, precision and set, and whether it was timed in full.
TEST(TuningJson, NamesAreCheckedByTheInjectedCheckAlone) {
  StoredEntry own_high = entry(kH200, 1024);
  own_high.precision = Precision::high;
  own_high.candidate_set = CandidateSet::own_only;
  const std::string text = entries_to_json({entry(kH200, 512), own_high});
  std::vector<std::pair<std::string, detail::StoredName>> asked;
  const NameCheck accept_all = [&](const std::string& name, const detail::StoredName& where) {
    asked.emplace_back(name, where);
    return std::string();
  };
  EXPECT_EQ(entries_from_json(text, accept_all).size(), 2u);
  // Each entry's winner, then its two candidates: the winner's own (ok) and the pruned naive.
  ASSERT_EQ(asked.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(asked[i].first);
    EXPECT_EQ(asked[i].second.M, 512);
    EXPECT_EQ(asked[i].second.precision, Precision::highest);
    EXPECT_FALSE(asked[i].second.own_only);
    EXPECT_EQ(asked[3 + i].second.M, 1024);
    EXPECT_EQ(asked[3 + i].second.precision, Precision::high);
    EXPECT_TRUE(asked[3 + i].second.own_only);
  }
  EXPECT_TRUE(asked[0].second.timed && asked[1].second.timed) << "the winner, and its ok candidate";
  EXPECT_EQ(asked[2].first, "naive");
  EXPECT_FALSE(asked[2].second.timed) << "a pruned candidate";

  const NameCheck refuse_1024 = [](const std::string&, const detail::StoredName& where) {
    return where.M == 1024 ? std::string("is not served by this test's build") : std::string();
  };
  try {
    entries_from_json(text, refuse_1024);
    FAIL() << "the refused name was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument().rfind("entries[1].", 0), 0u) << e.argument();
    EXPECT_NE(std::string(e.what()).find("is not served by this test's build"), std::string::npos);
  }
  // A name unknown to this build passes a lenient check: the vocabulary is the caller's.
  StoredEntry future = entry(kH200, 256, "hopperwg_bm128_bn256");
  EXPECT_EQ(entries_from_json(entries_to_json({future}), accept_all).size(), 1u);
  EXPECT_THROW(entries_from_json(entries_to_json({future}), detail::why_not_a_known_name), InvalidArgument);
}

// The build's check holds each name to where it stands: a winner (or a candidate timed in full)
// less accurate than the entry's precision, or a vendor candidate in an entry tuned with own
// kernels only, is refused naming it, as dispatch would never serve it. A candidate that was not
// timed may be anything the build knows, and a vendor one anywhere but in an own-only entry.
TEST(TuningJson, NamesMustFitTheirEntrysPrecisionAndCandidateSet) {
  detail::register_candidate_provider(std::make_unique<testing::FakeVendorProvider>());
  struct Unregister {
    ~Unregister() { detail::unregister_candidate_provider("fakevendor"); }
  } unregister;
  const std::string sp3 = "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp3_v4";  // 3xTF32: high
  const std::string sp1 = "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp1_v4";  // TF32: medium
  const auto at = [&](const std::string& winner, Precision precision) {
    StoredEntry e = entry(kH200, 512, winner);
    e.precision = precision;
    return e;
  };
  const auto refused = [](const StoredEntry& e) {
    try {
      entries_from_json(entries_to_json({e}), detail::why_not_a_known_name);
    } catch (const InvalidArgument& error) {
      return error.argument() + ": " + error.what();
    }
    return std::string("<accepted>");
  };
  EXPECT_NE(refused(at(sp3, Precision::highest)).find("entries[0].winner"), std::string::npos);
  EXPECT_NE(refused(at(sp3, Precision::highest)).find("computes at precision high, less accurate than the entry's highest"),
            std::string::npos);
  EXPECT_NE(refused(at(sp1, Precision::high)).find("entries[0].winner"), std::string::npos);
  EXPECT_NE(refused(at("cublas_v130100_m1", Precision::highest)).find("computes at precision medium"),
            std::string::npos) << "a provider says its candidates' precision";
  EXPECT_EQ(refused(at(sp3, Precision::medium)), "<accepted>");
  EXPECT_EQ(refused(at("tiled_t32_p0", Precision::high)), "<accepted>");
  EXPECT_EQ(refused(at("fakevendor_a1", Precision::highest)), "<accepted>")
      << "a provider that does not say its precision is not held to one";

  StoredEntry untimed_tf32 = at("tiled_t32_p0", Precision::high);
  untimed_tf32.candidates[1].variant = sp1;  // pruned
  EXPECT_EQ(refused(untimed_tf32), "<accepted>");
  StoredEntry timed_tf32 = untimed_tf32;
  timed_tf32.candidates[1].status = CandidateStatus::ok;
  EXPECT_NE(refused(timed_tf32).find("entries[0].candidates[1].variant"), std::string::npos);

  StoredEntry own_with_vendor = at("tiled_t32_p0", Precision::highest);
  own_with_vendor.candidates[1].variant = "fakevendor_a1";  // pruned, but a vendor's
  EXPECT_EQ(refused(own_with_vendor), "<accepted>") << "with vendor candidates";
  own_with_vendor.candidate_set = CandidateSet::own_only;
  EXPECT_NE(refused(own_with_vendor).find("entries[0].candidates[1].variant"), std::string::npos);
  EXPECT_NE(refused(own_with_vendor).find("is a vendor candidate, in an entry tuned with own kernels only"),
            std::string::npos);
  StoredEntry own_vendor_winner = at("fakevendor_a2", Precision::highest);
  own_vendor_winner.candidate_set = CandidateSet::own_only;
  EXPECT_NE(refused(own_vendor_winner).find("entries[0].winner"), std::string::npos);
}

TEST(TuningJson, EveryMalformedDocumentIsRejectedNamingTheFirstBadField) {
  const json valid = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024)}));
  const std::vector<Malformed> cases = {
      {"format", [](json& d) { d["format"] = "other-tool"; }, "format"},
      {"format missing", [](json& d) { d.erase("format"); }, "format"},
      {"newer version", [](json& d) { d["format_version"] = kJsonFormatVersion + 1; }, "format_version"},
      {"precision unknown", [](json& d) { d["entries"][1]["precision"] = "low"; }, "entries[1].precision"},
      {"precision not text", [](json& d) { d["entries"][0]["precision"] = 3; }, "entries[0].precision"},
      {"precision missing", [](json& d) { d["entries"][1].erase("precision"); }, "entries[1].precision"},
      {"precision in version 1", [](json& d) { d["format_version"] = 1; }, "entries[0].precision"},
      {"candidate set unknown", [](json& d) { d["entries"][1]["candidate_set"] = "all"; }, "entries[1].candidate_set"},
      {"candidate set not text", [](json& d) { d["entries"][0]["candidate_set"] = true; }, "entries[0].candidate_set"},
      {"candidate set missing", [](json& d) { d["entries"][1].erase("candidate_set"); }, "entries[1].candidate_set"},
      {"candidate set in version 2", [](json& d) { d["format_version"] = 2; }, "entries[0].candidate_set"},
      {"version as text", [](json& d) { d["format_version"] = "1"; }, "format_version"},
      {"entries missing", [](json& d) { d.erase("entries"); }, "entries"},
      {"entries not array", [](json& d) { d["entries"] = json::object(); }, "entries"},
      {"entry not object", [](json& d) { d["entries"][1] = 5; }, "entries[1]"},
      {"device_key missing", [](json& d) { d["entries"][0].erase("device_key"); }, "entries[0].device_key"},
      {"device_key form", [](json& d) { d["entries"][0]["device_key"] = "H200"; }, "entries[0].device_key"},
      {"arch mismatch", [](json& d) { d["entries"][0]["arch"] = "sm_80"; }, "entries[0].arch"},
      {"m zero", [](json& d) { d["entries"][0]["m"] = 0; }, "entries[0].m"},
      {"m negative", [](json& d) { d["entries"][0]["m"] = -4; }, "entries[0].m"},
      {"m too large", [](json& d) { d["entries"][0]["m"] = 2147483648LL; }, "entries[0].m"},
      {"m huge unsigned", [](json& d) { d["entries"][0]["m"] = 18446744073709551615ULL; }, "entries[0].m"},
      {"n fractional", [](json& d) { d["entries"][1]["n"] = 1.5; }, "entries[1].n"},
      {"k as text", [](json& d) { d["entries"][1]["k"] = "3"; }, "entries[1].k"},
      {"class", [](json& d) { d["entries"][0]["problem_class"] = "a3-dense"; }, "entries[0].problem_class"},
      {"unknown winner", [](json& d) { d["entries"][0]["winner"] = "tiled_t64_p0"; }, "entries[0].winner"},
      {"winner not a candidate", [](json& d) { d["entries"][0]["winner"] = "tiled_t8_p0"; }, "entries[0].winner"},
      {"median zero", [](json& d) { d["entries"][0]["median_ms"] = 0.0; }, "entries[0].median_ms"},
      {"median negative", [](json& d) { d["entries"][0]["median_ms"] = -1.0; }, "entries[0].median_ms"},
      {"median text", [](json& d) { d["entries"][0]["median_ms"] = "fast"; }, "entries[0].median_ms"},
      {"tflops negative", [](json& d) { d["entries"][0]["tflops"] = -2.0; }, "entries[0].tflops"},
      {"tflops absurd", [](json& d) { d["entries"][0]["tflops"] = 1e9; }, "entries[0].tflops"},
      {"margin negative", [](json& d) { d["entries"][0]["margin"] = -0.5; }, "entries[0].margin"},
      {"tuned_at form", [](json& d) { d["entries"][0]["tuned_at"] = "yesterday"; }, "entries[0].tuned_at"},
      {"template hash", [](json& d) { d["entries"][0]["template_hash"] = "XYZ"; }, "entries[0].template_hash"},
      {"nvrtc zero", [](json& d) { d["entries"][0]["nvrtc_version"] = 0; }, "entries[0].nvrtc_version"},
      {"driver missing", [](json& d) { d["entries"][0].erase("driver_version"); }, "entries[0].driver_version"},
      {"source", [](json& d) { d["entries"][0]["source"] = "stolen"; }, "entries[0].source"},
      {"tilemm version", [](json& d) { d["entries"][0]["tilemm_version"] = "a b"; }, "entries[0].tilemm_version"},
      {"candidates not array", [](json& d) { d["entries"][0]["candidates"] = "none"; }, "entries[0].candidates"},
      {"candidate status", [](json& d) { d["entries"][0]["candidates"][1]["status"] = "great"; }, "entries[0].candidates[1].status"},
      {"candidate variant", [](json& d) { d["entries"][0]["candidates"][1]["variant"] = "warp_x1"; }, "entries[0].candidates[1].variant"},
      {"candidate twice", [](json& d) { d["entries"][0]["candidates"][1]["variant"] = "tiled_t32_p0"; }, "entries[0].candidates[1].variant"},
      {"ok with no samples", [](json& d) { d["entries"][0]["candidates"][0]["samples"] = 0; }, "entries[0].candidates[0].samples"},
      {"winner wrong", [](json& d) { d["entries"][0]["candidates"][0]["status"] = "wrong_result"; }, "entries[0].candidates[0].status"},
      {"min above median", [](json& d) { d["entries"][0]["candidates"][0]["min_ms"] = 9.0; }, "entries[0].candidates[0].min_ms"},
      {"spread negative", [](json& d) { d["entries"][0]["candidates"][0]["spread"] = -1; }, "entries[0].candidates[0].spread"},
      {"reason too long", [](json& d) { d["entries"][0]["candidates"][1]["reason"] = std::string(5000, 'x'); }, "entries[0].candidates[1].reason"},
      {"reason not text", [](json& d) { d["entries"][0]["candidates"][1]["reason"] = 7; }, "entries[0].candidates[1].reason"},
      {"duplicate entry", [](json& d) { d["entries"][1]["m"] = 512; d["entries"][1]["n"] = 1024; }, "entries[1].m"},
      {"plan splits no row", [](json& d) { set_winner(d["entries"][0], "rowsplit_h512"); }, "entries[0].winner"},
      {"plan tuning never makes", [](json& d) { set_winner(d["entries"][0], "rowsplit_h511"); }, "entries[0].winner"},
      {"plan of zero rows", [](json& d) { set_winner(d["entries"][0], "rowsplit_h0"); }, "entries[0].winner"},
      {"plan with a leading 0", [](json& d) { set_winner(d["entries"][0], "rowsplit_h0256"); }, "entries[0].winner"},
  };
  for (const auto& c : cases) {
    json doc = valid;
    c.mutate(doc);
    EXPECT_EQ(rejected_field(doc.dump()), c.field) << c.what;
  }
  // 1e400 overflows a double: nlohmann throws out_of_range, not parse_error (found by fuzzing).
  for (const char* text : {"", "{", "[]", "null", "\"x\"", "{\"format\": \"tilemm-tuning\",}",
                           "{\"format\": \"tilemm-tuning\", \"format_version\": 1e400}"})
    EXPECT_EQ(rejected_field(text), "document") << "'" << text << "'";
}

// An entry written by hand or by another tool may give just its winner: no candidates, or an
// empty list. It imports, exports with an empty list and imports again.
// Memory holds one entry at a time, and one entry is bounded too: an entry (or a member of the
// format) that builds past 4 MiB is refused half-read; a member the format does not have is
// only parsed. The error still names the first bad entry.
TEST(TuningJson, AnEntryPastFourMiBIsRefusedAndUnknownMembersAreOnlyParsed) {
  const json valid = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024)}));
  const json junk = json(std::vector<json>(300000, json::array()));  // 300,000 values
  json doc = valid;
  doc["entries"][0]["junk"] = junk;
  EXPECT_EQ(rejected_field(doc.dump()), "entries[0]");
  doc = valid;
  doc["entries"][0]["m"] = 0;
  doc["entries"][1]["junk"] = junk;
  EXPECT_EQ(rejected_field(doc.dump()), "entries[0].m");  // the first bad entry, counted right
  doc = valid;
  doc["entries"][0]["junk"] = junk;
  doc["entries"][1]["m"] = 0;
  EXPECT_EQ(rejected_field(doc.dump()), "entries[0]");
  doc = valid;
  doc["format"] = junk;
  EXPECT_EQ(rejected_field(doc.dump()), "format");
  doc = valid;
  doc["notes"] = junk;
  doc["more"] = "text";
  EXPECT_EQ(entries_from_json(doc.dump(), detail::why_not_a_known_name).size(), 2u);
  // Below the bound, an entry's unknown field is read as before.
  doc = valid;
  doc["entries"][0]["junk"] = json(std::vector<json>(1000, json::array()));
  EXPECT_EQ(entries_from_json(doc.dump(), detail::why_not_a_known_name).size(), 2u);
}

TEST(TuningJson, CandidatesMayBeOmittedOrEmpty) {
  json doc = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024), entry(kH200, 2048)}));
  doc["entries"][0].erase("candidates");
  doc["entries"][1]["candidates"] = json::array();
  const auto read = entries_from_json(doc.dump(), detail::why_not_a_known_name);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_TRUE(read[0].candidates.empty());
  EXPECT_TRUE(read[1].candidates.empty());
  EXPECT_EQ(read[2].candidates.size(), 2u);  // listed ones are still read
  EXPECT_EQ(read[0].winner, "tiled_t32_p0");
  const json again = json::parse(entries_to_json(read));
  EXPECT_EQ(again["entries"][0]["candidates"], json::array());
  const auto back = entries_from_json(again.dump(), detail::why_not_a_known_name);
  for (std::size_t i = 0; i < read.size(); ++i)
    testing::expect_same_entry(back[i], read[i], testing::CandidateOrder::same);

  // Without candidates the winner is still checked on its own.
  doc["entries"][0]["winner"] = "tiled_t64_p0";
  EXPECT_EQ(rejected_field(doc.dump()), "entries[0].winner");
  doc["entries"][0]["winner"] = "rowsplit_h512";  // m is 512: splits no row
  EXPECT_EQ(rejected_field(doc.dump()), "entries[0].winner");
}

// The members outside "entries" may come after them (an export writes "entries" first), yet the
// error named is the same as if the whole document had been read first: invalid JSON, then the
// document's shape, "format", "format_version", then the first bad entry.
TEST(TuningJson, ErrorsKeepTheirOrderWhereverTheFormatFieldsAre) {
  const std::string bad_entry = R"({"entries": [{"m": 1}], )";
  EXPECT_EQ(rejected_field(bad_entry + R"("format": "tilemm-tuning", "format_version": 1})"), "entries[0].device_key");
  EXPECT_EQ(rejected_field(bad_entry + R"("format": "other", "format_version": 1})"), "format");
  EXPECT_EQ(rejected_field(bad_entry + R"("format": "tilemm-tuning", "format_version": 4})"), "format_version");
  EXPECT_EQ(rejected_field(bad_entry + R"("format": "tilemm-tuning", "format_version": 1)"), "document");
  EXPECT_EQ(rejected_field(bad_entry + R"("format": "tilemm-tuning"})"), "format_version");
  EXPECT_EQ(rejected_field(R"({"format": "tilemm-tuning", "format_version": 1, "entries": 7})"), "entries");
  EXPECT_EQ(rejected_field(R"({"format": "tilemm-tuning", "format_version": 1, "entries": [], "entries": []})"), "entries");
  EXPECT_EQ(rejected_field(R"([{"format": "tilemm-tuning", "format_version": 1, "entries": []}])"), "document");
  EXPECT_EQ(rejected_field(R"({"format": "tilemm-tuning", "format_version": 1, "entries": []} [)"), "document");
  // The second bad entry is not the one named.
  json doc = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024), entry(kH200, 2048)}));
  doc["entries"][1]["tflops"] = -1;
  doc["entries"][2]["margin"] = -1;
  EXPECT_EQ(rejected_field(doc.dump()), "entries[1].tflops");
}

// A document served in pieces, one entry at a time, counting what the reader has taken.
class GeneratedDocument : public std::streambuf {
 public:
  GeneratedDocument(std::size_t entries, std::function<std::string(std::size_t)> entry_text)
      : entries_(entries), entry_text_(std::move(entry_text)) {}
  // How many entries' text the reader has been given, completely or in part.
  std::size_t entries_served() const { return std::min(next_ == 0 ? 0 : next_ - 1, entries_); }
  std::size_t bytes_served() const { return bytes_; }

 protected:
  int_type underflow() override {
    if (next_ > entries_ + 1) return traits_type::eof();
    if (next_ == 0) {
      chunk_ = "{\"entries\": [\n";
    } else if (next_ <= entries_) {
      chunk_ = entry_text_(next_ - 1) + (next_ < entries_ ? ",\n" : "\n");
    } else {
      chunk_ = "], \"format\": \"tilemm-tuning\", \"format_version\": 3}\n";
    }
    ++next_;
    bytes_ += chunk_.size();
    setg(chunk_.data(), chunk_.data(), chunk_.data() + chunk_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::size_t entries_, next_ = 0, bytes_ = 0;
  std::function<std::string(std::size_t)> entry_text_;
  std::string chunk_;
};

// The reader hands each entry on before it reads the next, so its memory does not grow with
// the file; the format fields come last, as in an export.
TEST(TuningJson, TheStreamingReaderHandsOnEachEntryBeforeReadingTheNext) {
  const std::string one = json::parse(entries_to_json({entry(kH200, 999999)}))["entries"][0].dump();
  const auto at = one.find("999999");
  ASSERT_NE(at, std::string::npos);
  const auto text_of = [&](std::size_t i) {
    return one.substr(0, at) + std::to_string(i + 1) + one.substr(at + 6);  // m = i + 1
  };
  constexpr std::size_t kEntries = 5000;
  GeneratedDocument source(kEntries, text_of);
  std::istream in(&source);
  std::size_t seen = 0, most_read_ahead = 0;
  const std::size_t count = read_entries_json(in, detail::why_not_a_known_name, [&](StoredEntry&& e) {
    ++seen;
    EXPECT_EQ(e.M, static_cast<std::int64_t>(seen));  // in file order
    most_read_ahead = std::max(most_read_ahead, source.entries_served() - seen);
  });
  EXPECT_EQ(count, kEntries);
  EXPECT_EQ(seen, kEntries);
  EXPECT_LE(most_read_ahead, 1u);  // at most the next entry's first characters
  EXPECT_GT(source.bytes_served(), kEntries * (one.size() - 6));  // the whole document was read

  // The same text in one piece gives the same entries.
  std::string whole = "{\"entries\": [";
  for (std::size_t i = 0; i < 3; ++i) whole += (i ? "," : "") + text_of(i);
  whole += "], \"format\": \"tilemm-tuning\", \"format_version\": 3}";
  std::istringstream piece(whole);
  std::vector<StoredEntry> streamed;
  read_entries_json(piece, detail::why_not_a_known_name, [&](StoredEntry&& e) { streamed.push_back(std::move(e)); });
  const auto parsed = entries_from_json(whole, detail::why_not_a_known_name);
  ASSERT_EQ(streamed.size(), 3u);
  ASSERT_EQ(parsed.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i)
    testing::expect_same_entry(streamed[i], parsed[i], testing::CandidateOrder::same);
}

// An entry handed on is not taken back: a document that turns out bad after it still throws,
// which is why a caller that stores entries as they come needs a transaction.
TEST(TuningJson, TheStreamingReaderThrowsAfterHandingOnEntriesOfABadDocument) {
  std::size_t seen = 0;
  json doc = json::parse(entries_to_json({entry(kH200, 512), entry(kH200, 1024)}));
  doc["format_version"] = kJsonFormatVersion + 1;
  std::istringstream in(doc.dump());  // "entries" comes before "format_version"
  try {
    read_entries_json(in, detail::why_not_a_known_name, [&](StoredEntry&&) { ++seen; });
    ADD_FAILURE() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.argument(), "format_version");
  }
  EXPECT_EQ(seen, 2u);
}

// An entry as preloaded_entries() hands it out.
StoredEntry preloaded(std::string key, std::int64_t m, std::string winner) {
  StoredEntry e = entry(std::move(key), m, std::move(winner));
  e.source = "preloaded";
  return e;
}

TEST(Preloaded, LookupPrefersTheExactDeviceThenTheSameArchitecture) {
  // Another driver and NVRTC than the entries were tuned under: a shipped result still applies.
  const BuildVersions hash{"00112233aabbccdd", 13020, 13020};
  auto exact = preloaded(kH200, 512, "tiled_t16_p0");
  auto same_arch = preloaded("NVIDIA H100|sm_90|132sm|81559MiB", 512, "tiled_t8_p0");
  auto other_arch = preloaded("NVIDIA A100|sm_80|108sm|40326MiB", 512, "naive");
  const std::vector<StoredEntry> entries = {same_arch, other_arch, exact};

  auto found = find_preloaded(entries, kH200, "sm_90", 512, 1024, 3, "a4-dense", hash);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->winner, "tiled_t16_p0");

  found = find_preloaded(entries, "NVIDIA GH200|sm_90|132sm|97871MiB", "sm_90", 512, 1024, 3, "a4-dense", hash);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->winner, "tiled_t8_p0");

  EXPECT_FALSE(find_preloaded(entries, "NVIDIA L4|sm_89|58sm|22478MiB", "sm_89", 512, 1024, 3, "a4-dense", hash));
  EXPECT_FALSE(find_preloaded(entries, kH200, "sm_90", 512, 1024, 4, "a4-dense", hash));
  EXPECT_FALSE(find_preloaded(entries, kH200, "sm_90", 512, 1024, 3, "a1-dense", hash));
  // Made from other kernel templates: its winner may not exist or not be what was timed.
  EXPECT_FALSE(find_preloaded(entries, kH200, "sm_90", 512, 1024, 3, "a4-dense",
                              BuildVersions{"ffffffffffffffff", 13000, 13000}));
  // A highest entry answers no other precision, and one of another precision not highest's.
  EXPECT_FALSE(find_preloaded(entries, kH200, "sm_90", 512, 1024, 3, "a4-dense", hash, Precision::high));
  auto high = preloaded(kH200, 512, "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp3_v4");
  high.precision = Precision::high;
  const std::vector<StoredEntry> with_high = {high};
  found = find_preloaded(with_high, kH200, "sm_90", 512, 1024, 3, "a4-dense", hash, Precision::high);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->winner, high.winner);
  EXPECT_FALSE(find_preloaded(with_high, kH200, "sm_90", 512, 1024, 3, "a4-dense", hash));
}

TEST(Preloaded, AnEntryAppliesToItsModelOrArchitectureFromTheSameTemplates) {
  const BuildVersions hash{"00112233aabbccdd", 13020, 0};
  const auto h100 = preloaded("NVIDIA H100|sm_90|132sm|81559MiB", 512, "tiled_t8_p0");
  EXPECT_TRUE(preloaded_applies(h100, "NVIDIA H100|sm_90|132sm|81559MiB", "sm_90", hash));
  EXPECT_TRUE(preloaded_applies(h100, kH200, "sm_90", hash));  // same architecture
  EXPECT_FALSE(preloaded_applies(h100, "NVIDIA L4|sm_89|58sm|22478MiB", "sm_89", hash));
  EXPECT_FALSE(preloaded_applies(h100, "NVIDIA H100|sm_90|132sm|81559MiB", "sm_90",
                                 BuildVersions{"ffffffffffffffff", 13000, 13000}));
}

TEST(Preloaded, ShippedFilesParseAndAreMarkedPreloaded) {
  // Every shipped file is valid (an invalid one would be skipped with a warning): the H200 file
  // holds the standard shape set.
  const auto& all = preloaded_entries(detail::why_not_a_known_name);
  std::set<std::int64_t> sizes;
  for (const auto& e : all) {
    EXPECT_EQ(e.source, "preloaded");
    if (e.device_key.rfind("NVIDIA H200|sm_90|", 0) == 0 && e.M == e.N && e.N == e.K) sizes.insert(e.M);
  }
  EXPECT_EQ(sizes, (std::set<std::int64_t>{512, 1000, 1024, 2048, 3000, 4096, 4097, 8192}));
}

// The L2 of the H200 as the CUDA runtime reports it (cudaDeviceProp::l2CacheSize): which shipped
// shapes are timed on the same buffers, and so which timing method version their results carry.
constexpr std::uint64_t kH200L2Bytes = 50u << 20;

// Every precision's results at every standard size are fresh for this build: made by the kernels
// that can serve each shape and timed by this build's timing method (the results hash that the
// dispatcher compares). A change to a family that serves a shape makes its entries stale, and they
// must then be re-tuned, not shipped as guesses that no user's first call would take. Re-tuning
// needs the GPU (scripts/gpu-refresh-preloaded.sh), so a machine without one reports a stale file
// and skips; on a GPU machine it fails.
TEST(Preloaded, ShippedFilesAreFreshForThisBuild) {
  const auto& all = preloaded_entries(detail::why_not_a_known_name);
  std::vector<std::string> stale;
  for (const Precision precision : {Precision::highest, Precision::high, Precision::medium})
    for (const std::int64_t n : {512, 1000, 1024, 2048, 3000, 4096, 4097, 8192}) {
      Problem problem = Problem::dense(n, n, n, 4);
      problem.precision = precision;
      const auto found = find_preloaded(
          all, "NVIDIA H200|sm_90|132sm|143155MiB", "sm_90", n, n, n, dispatch::class_of(problem),
          BuildVersions{dispatch::results_hash(problem, 90, kH200L2Bytes), 0, 0}, precision);
      if (!found) stale.push_back(std::string(to_string(precision)) + " " + std::to_string(n));
      else EXPECT_EQ(found->source, "preloaded");
    }
  if (stale.empty()) return;
  std::string list;
  for (const auto& s : stale) list += (list.empty() ? "" : ", ") + s;
  const std::string why = "the shipped H200 cache has no fresh entry for " + list +
                          ": it was made from other kernels or timed by another timing method; "
                          "refresh it on the GPU (scripts/gpu-refresh-preloaded.sh)";
  if (device_count() == 0) GTEST_SKIP() << why;
  ADD_FAILURE() << why;
}

}  // namespace
}  // namespace tilemm::cache
