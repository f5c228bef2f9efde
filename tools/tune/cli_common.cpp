#include "cli_common.hpp"

#include <iomanip>
#include <sstream>

#include "cache_trust.hpp"
#include "kernel_sources.hpp"
#include "provenance.hpp"
#include "store_open.hpp"
#include "tilemm/tilemm.hpp"
#include "timing_method.hpp"

namespace tilemm::cli {

using nlohmann::json;

std::int64_t parse_ordinal(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidArgument("--device", "'" + text + "' is not a GPU ordinal (0, 1, ...) or 'all'");
  return std::stoll(text);
}

int damaged_cache(std::ostream& err, const std::string& path, const cache::CacheCorrupt& e,
                  const char* consequence) {
  err << tool::error_line(kName, cache::damaged_cache_note(path, e.reason()) + "; " + consequence);
  return kDamagedCache;
}

std::string build_versions_text() {
  return "kernel templates " + detail::templates_hash() + "; timing method " +
         std::to_string(tuner::kTimingMethodVersion);
}

void warn(std::ostream& err, const std::string& message) {
  err << "tilemm-tune: warning: " << message << "\n";
}

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string candidate_set_cell(const cache::StoredEntry& e) {
  return e.candidate_set == cache::CandidateSet::own_only ? "own only" : "";
}


int failure(std::ostream& err, const std::string& message) {
  err << tool::error_line(kName, message);
  return kFailure;
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string status_text(const CandidateResult& c) {
  switch (c.status) {
    // A row-split plan's reason names the winners of its parts.
    case CandidateStatus::ok: return c.reason.empty() ? "ok" : "ok: " + c.reason;
    case CandidateStatus::wrong_result: return "wrong result: " + c.reason;
    case CandidateStatus::compile_error: return "compile error: " + c.reason;
    case CandidateStatus::launch_error: return "launch error: " + c.reason;
    case CandidateStatus::cannot_run: return "cannot run: " + c.reason;
    case CandidateStatus::pruned: return "pruned: " + c.reason;
  }
  return "?";
}

}  // namespace tilemm::cli
