// tilemm-tune: tune shapes ahead of time, and list, export, import or clear the cache.
// The program's main() is a thin wrapper around run_tune_cli so tests can drive it in-process.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tilemm/autotune.hpp"

namespace tilemm::cli {

using Shape = std::array<std::int64_t, 3>;  // M, N, K

// "512,1024" -> 512x512x512, 1024x1024x1024. Throws tilemm::InvalidArgument("--sizes").
std::vector<Shape> parse_sizes(const std::string& text);
// "1024x512x256,8x8x8". Throws tilemm::InvalidArgument("--shapes").
std::vector<Shape> parse_shapes(const std::string& text);

// The status column of a candidate in the tuning table: "ok", or the status and its reason
// ("pruned: ..."); a row-split plan's "ok: " names its parts' winners.
std::string status_text(const CandidateResult& c);

// "tilemm-tune: error: <message>" as one line on `err`; returns the failure exit code (1).
int failure(std::ostream& err, const std::string& message);
// `v` with `digits` decimals: "30.2".
std::string fixed(double v, int digits);

// Runs the CLI. Returns the exit code: 0 success, 2 usage error, 1 anything else. Human output
// and --json go to `out`; errors (one line each) and the progress display go to `err`; the
// progress display is drawn only when `err_is_terminal`.
int run_tune_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                 bool err_is_terminal);

}  // namespace tilemm::cli
