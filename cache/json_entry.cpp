#include "json_entry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <set>

#include "json_spellings.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

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

json entry_to_json(const StoredEntry& e) {
  json candidates = json::array();
  for (const auto& c : e.candidates) candidates.push_back(candidate_to_json(c));
  return {{"device_key", e.device_key},
          {"arch", e.arch},
          {"m", e.M},
          {"n", e.N},
          {"k", e.K},
          {"problem_class", e.problem_class},
          {"precision", to_string(e.precision)},
          {"candidate_set", to_string(e.candidate_set)},
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
          {"candidates", candidates}};
}

namespace {

constexpr std::size_t kMaxText = 4096;

// A name the running build can serve where it stands in the entry, by the check its caller injected.
void check_name(const JsonFieldReader& r, const std::string& field, const std::string& name,
                const detail::StoredName& where, const NameCheck& names) {
  if (const std::string why = names(name, where); !why.empty()) r.fail(field, why);
}

CandidateResult read_candidate(const JsonFieldReader& r, detail::StoredName where, const NameCheck& names) {
  CandidateResult c;
  c.variant = r.text("variant", kMaxText, "a variant name");
  if (!is_variant_spelling(c.variant))
    r.fail("variant", "must be a variant name, got \"" + c.variant.substr(0, 80) + "\"");
  const std::string status = r.text("status", kMaxText, "a status");
  try {
    c.status = candidate_status_from_string(status);
  } catch (const InvalidArgument&) {
    r.fail("status", "must be one of ok, wrong_result, compile_error, launch_error, cannot_run, pruned; got \"" + status + "\"");
  }
  const bool ok = c.status == CandidateStatus::ok;
  // One not timed in full says why in its reason; its precision is not the entry's to check.
  where.timed = ok;
  check_name(r, "variant", c.variant, where, names);
  c.reason = r.text("reason", kMaxText, "text of at most 4096 characters");
  c.stats.median_ms = r.number("median_ms", 0.0, !ok);
  c.stats.min_ms = r.number("min_ms", 0.0, !ok);
  if (ok && c.stats.min_ms > c.stats.median_ms) r.fail("min_ms", "must not exceed median_ms");
  c.stats.spread = r.number("spread", 0.0, true);
  c.stats.samples = static_cast<int>(r.integer("samples", ok ? 1 : 0, 1000000));
  c.compile_ms = r.number("compile_ms", 0.0, true);
  return c;
}

}  // namespace

StoredEntry read_entry(const JsonFieldReader& r, const NameCheck& names) {
  constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();

  StoredEntry e;
  e.device_key = r.text("device_key", is_device_key_spelling, "a device key \"name|sm_XY|<SMs>sm|<memory>MiB\"");
  e.arch = r.text("arch", is_arch_spelling, "an architecture such as \"sm_90\"");
  if (e.device_key.find("|" + e.arch + "|") == std::string::npos)
    r.fail("arch", "must be the architecture named in device_key");
  e.M = r.integer("m", 1, kMaxDim);
  e.N = r.integer("n", 1, kMaxDim);
  e.K = r.integer("k", 1, kMaxDim);
  e.problem_class = r.text("problem_class", is_problem_class_spelling, "a problem class such as \"a4-dense\"");
  // Required by version 2, absent from version 1: which of the two the document is may only be
  // known at its end (DocumentReader::finish checks that the entries agree with it).
  if (r.has("precision")) {
    const std::string precision = r.text("precision", kMaxText, "one of highest, high, medium");
    const auto parsed = parse_precision(precision);
    if (!parsed)
      r.fail("precision", "must be one of highest, high, medium; got \"" + precision.substr(0, 80) + "\"");
    e.precision = *parsed;
  }
  // Required by version 3, absent from versions 1 and 2 (checked by the document reader like
  // "precision"): an entry of those is given the set its names show, below. Read before the
  // names, which are checked against it.
  std::optional<CandidateSet> set;
  if (r.has("candidate_set")) {
    const std::string text = r.text("candidate_set", kMaxText, "one of with_vendor, own_only");
    set = parse_candidate_set(text);
    if (!set)
      r.fail("candidate_set", "must be one of with_vendor, own_only; got \"" + text.substr(0, 80) + "\"");
  }
  detail::StoredName where;
  where.M = e.M;
  where.precision = e.precision;
  where.own_only = set == CandidateSet::own_only;
  e.winner = r.text("winner", kMaxText, "a variant name");
  where.timed = true;
  check_name(r, "winner", e.winner, where, names);
  e.median_ms = r.number("median_ms", 0.0, false);
  e.tflops = r.number("tflops", 0.0, true, 1e6);
  e.margin = r.number("margin", 0.0, true);
  e.tuned_at = r.text("tuned_at", is_utc_time_spelling, "an ISO-8601 UTC time \"YYYY-MM-DDThh:mm:ssZ\"");
  e.tilemm_version = r.text("tilemm_version", is_version_spelling, "a version string");
  e.versions.template_hash = r.text("template_hash", is_template_hash_spelling, "16 lowercase hex digits");
  e.versions.nvrtc_version = static_cast<int>(r.integer("nvrtc_version", 1, 1000000));
  e.versions.driver_version = static_cast<int>(r.integer("driver_version", 1, 1000000));
  e.source = r.text("source", is_entry_source_spelling, "one of tuned, imported, preloaded");
  // Optional: an entry written by hand or by another tool may name just its winner.
  // Never destroyed: a background tuning may read the preloaded results while the process exits.
  static const auto& no_candidates = *new json(json::array());
  const json& candidates = r.has("candidates") ? r.array("candidates") : no_candidates;
  std::set<std::string> seen;
  bool winner_listed = false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const JsonFieldReader cr(candidates[i], r.join("candidates[" + std::to_string(i) + "]"));
    CandidateResult c = read_candidate(cr, where, names);
    if (!seen.insert(c.variant).second) cr.fail("variant", "appears twice in this entry");
    if (c.variant == e.winner) {
      winner_listed = true;
      if (c.status != CandidateStatus::ok) cr.fail("status", "the winner's candidate must be ok");
    }
    e.candidates.push_back(std::move(c));
  }
  if (!candidates.empty() && !winner_listed) r.fail("winner", "is not among the entry's candidates");
  e.candidate_set = set ? *set : inferred_candidate_set(e.winner, e.candidates);
  return e;
}

StoredEntry entry_from_json_text(std::string_view text, const NameCheck& names) {
  if (text.size() > kMaxEntryTextBytes)
    throw InvalidArgument("entry", "is " + std::to_string(text.size()) + " bytes; at most " +
                                       std::to_string(kMaxEntryTextBytes) + " are read");
  json value;
  try {
    value = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for huge numbers
    throw InvalidArgument("entry", std::string("is not valid JSON: ") + e.what());
  }
  const JsonFieldReader r(value, "entry");
  StoredEntry e = read_entry(r, names);
  r.field("precision");  // required: every stored value has it
  // "candidate_set" is not: a value a build before it published reads with the set its names
  // show (read_entry), and is refused by its key's check where that is not its key's set.
  return e;
}

namespace {
// The document's members in the order nlohmann's dump() writes an object's (sorted by name):
// "entries" first, so that it can be written as it goes.
constexpr const char* kDocumentTail = "\n  ],\n  \"format\": \"";
}  // namespace

std::string json_text(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

JsonEntriesWriter::JsonEntriesWriter(std::ostream& out) : out_(out) { out_ << "{\n  \"entries\": ["; }

// Each entry as dump(2) writes an element of the document's array: indented by four spaces.
void JsonEntriesWriter::add(const StoredEntry& e) {
  const std::string text = json_text(entry_to_json(e), 2);
  out_ << (count_ == 0 ? "\n    " : ",\n    ");
  for (const char c : text) {
    out_ << c;
    if (c == '\n') out_ << "    ";
  }
  ++count_;
}

void JsonEntriesWriter::finish() {
  if (finished_) return;
  finished_ = true;
  if (count_ == 0) {
    out_ << "],\n  \"format\": \"";
  } else {
    out_ << kDocumentTail;
  }
  out_ << kJsonFormatName << "\",\n  \"format_version\": " << kJsonFormatVersion << "\n}\n";
}

}  // namespace tilemm::cache
