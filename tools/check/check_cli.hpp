// tilemm-check: the randomized differential check of every public GEMM entry point, as a
// program a user runs on their own GPU. Exit codes: 0 every case passed, 1 a case failed (or the
// check could not run: no device), 2 a usage error.
#pragma once

#include <ostream>

namespace tilemm::check {

int run_check_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                  bool err_is_terminal);

}  // namespace tilemm::check
