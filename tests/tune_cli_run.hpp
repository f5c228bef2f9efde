// tilemm-tune run in this process (cli::run_tune_cli) with its output captured, for the CPU tests
// of the tool.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "tune_cli.hpp"

namespace tilemm::testing {

struct TuneCliRun {
  int code;
  std::string out, err;
};

// `args` without the program's name; stderr is not a terminal (no progress display).
inline TuneCliRun run_tune(std::vector<std::string> args) {
  args.insert(args.begin(), "tilemm-tune");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::run_tune_cli(static_cast<int>(argv.size()), argv.data(), out, err, false);
  return {code, out.str(), err.str()};
}

}  // namespace tilemm::testing
