// The names of the public enums (tilemm/autotune.hpp, tilemm/precision.hpp), in text and back: the cache and the JSON
// files store them, so they live below both.
#include <optional>
#include <string>

#include "tilemm/autotune.hpp"
#include "tilemm/error.hpp"
#include "tilemm/precision.hpp"

namespace tilemm {

const char* to_string(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::ok: return "ok";
    case CandidateStatus::wrong_result: return "wrong_result";
    case CandidateStatus::compile_error: return "compile_error";
    case CandidateStatus::launch_error: return "launch_error";
    case CandidateStatus::cannot_run: return "cannot_run";
    case CandidateStatus::pruned: return "pruned";
  }
  return "unknown";
}

CandidateStatus candidate_status_from_string(const std::string& s) {
  for (auto status : {CandidateStatus::ok, CandidateStatus::wrong_result,
                      CandidateStatus::compile_error, CandidateStatus::launch_error,
                      CandidateStatus::cannot_run, CandidateStatus::pruned})
    if (s == to_string(status)) return status;
  throw InvalidArgument("status", "unknown candidate status '" + s + "'");
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::highest: return "highest";
    case Precision::high: return "high";
    case Precision::medium: return "medium";
  }
  return "unknown";
}

std::optional<Precision> parse_precision(const std::string& text) {
  for (auto p : {Precision::highest, Precision::high, Precision::medium})
    if (text == to_string(p)) return p;
  return std::nullopt;
}

bool serves(Precision offered, Precision wanted) {
  // Declared from the most to the least accurate.
  return static_cast<int>(offered) <= static_cast<int>(wanted);
}

const char* to_string(ResultSource s) {
  switch (s) {
    case ResultSource::tuned: return "tuned";
    case ResultSource::cache: return "cache";
    case ResultSource::imported: return "imported";
    case ResultSource::remote: return "remote";
    case ResultSource::preloaded: return "preloaded";
    case ResultSource::fallback: return "fallback";
  }
  return "unknown";
}

}  // namespace tilemm
