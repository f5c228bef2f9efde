// What the commands of tilemm-tune share: the program's name, its exit codes, its warning and
// error lines, how a shape and a GPU ordinal are written, and what this build versions results by.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "tool_conventions.hpp"
#include "tune_cli.hpp"
#include "tuning_store.hpp"

namespace tilemm::cli {

constexpr const char* kName = "tilemm-tune";
// Exit codes (docs/cli.md). kDamagedCache: --list or --export found the cache file damaged and
// left it in place, so the output lacks its entries.
constexpr int kOk = tool::kSuccess, kFailure = tool::kFailure, kDamagedCache = 3;

// "N" of --device N; throws InvalidArgument("--device") for anything else.
std::int64_t parse_ordinal(const std::string& text);

// The error line of a damaged cache file and what it cost (`consequence`); returns kDamagedCache.
int damaged_cache(std::ostream& err, const std::string& path, const cache::CacheCorrupt& e,
                  const char* consequence);

// What the results hash of every entry this build tunes is made of (dispatch::results_hash): the
// hash over all kernel templates and the tuner's timing method. An entry's own hash covers only
// the families that can run its problem, so it is per shape: --list says which are fresh.
std::string build_versions_text();

// "tilemm-tune: warning: <message>" as one line on `err`.
void warn(std::ostream& err, const std::string& message);

// "MxNxK".
std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k);

// The "candidates" cell of --list: "own only" for a result chosen among own kernels only
// (cache::CandidateSet), empty for one chosen with vendor candidates, the usual case.
std::string candidate_set_cell(const cache::StoredEntry& e);

}  // namespace tilemm::cli
