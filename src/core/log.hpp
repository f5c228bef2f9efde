// Diagnostics to stderr, filtered by TILEMM_LOG=error|warn|info|debug (default warn).
#pragma once

#include <string>

namespace tilemm::detail {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

bool log_enabled(LogLevel level);
// One line: "tilemm: <level>: <message>".
void log(LogLevel level, const std::string& message);

}  // namespace tilemm::detail
