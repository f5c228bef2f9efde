// tilemm-tune's tuning: the shapes on one GPU or on every GPU (one thread each), each shape in
// worker processes (isolated_tuning.hpp) unless in-process, shown as a table or as JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "isolated_tuning.hpp"
#include "tune_cli.hpp"

namespace tilemm::cli {

struct Isolation {
  bool enabled = true;
  double watchdog_seconds = 120;
};

// Tunes `shapes` on the GPUs `device_option` names ("": the current one, "all", or an ordinal).
// Returns the exit code; the progress display goes to `err` when `tty`.
int tune_command(const std::vector<Shape>& shapes, const std::string& device_option,
                 const SearchChoice& search, bool as_json, const Isolation& isolation,
                 std::ostream& out, std::ostream& err, bool tty);

}  // namespace tilemm::cli
