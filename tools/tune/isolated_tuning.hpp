// Tuning in a child process with a watchdog, so that a candidate that crashes the CUDA context
// (an illegal address) or never finishes (a hang) costs tilemm-tune one worker, not the run.
//
// The parent starts "<self> --worker ..." for one shape. The worker tunes it with hooks that
// print one line per event on stdout:
//   candidate <variant>          before the candidate touches the GPU
//   failed <variant> <reason>    its launch or kernel failed; the worker exits (the context may
//                                be lost), and the parent starts a new one that skips it
//   done                         the result is in the cache
// If the worker dies or says nothing for `watchdog_seconds`, the parent kills it, records the
// last announced candidate as failed ("crashed" / "hung"), and starts another worker.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "tilemm/autotune.hpp"

#include "tune_cli.hpp"

namespace tilemm::cli {

// What a tuning run asks for each shape: re-tune a fresh result, and the search's budget
// (Options::tune_budget_ms; 0: the exhaustive search).
struct SearchChoice {
  bool force = false;
  double budget_ms = Options::kDefaultTuneBudgetMs;
  Precision precision = Precision::highest;  // --precision
  bool vendor = true;                         // false: --no-vendor (Options::vendor)
  // The fleet's store the tunings look up and publish to (Options::remote_cache): --remote,
  // else TILEMM_REMOTE_CACHE; empty: none.
  std::string remote_cache = Options::remote_cache_from_environment();

  // The Options of a tuning with this choice: TunePolicy::tune_on_miss whatever TILEMM_TUNE
  // says, since the run is to tune.
  Options options() const {
    Options o;
    o.policy = TunePolicy::tune_on_miss;
    o.force = force;
    o.tune_budget_ms = budget_ms;
    o.precision = precision;
    o.vendor = vendor;
    o.remote_cache = remote_cache;
    return o;
  }
};

struct IsolatedOutcome {
  bool ok = false;
  std::string error;                          // when !ok: why no worker could finish
  std::map<std::string, std::string> failed;  // candidates that took a worker down, and how
};

// Parent side. `self` is this program's path; the cache is the default context's, named on the
// worker's command line. The worker's environment is this process's with TILEMM_REMOTE_CACHE set
// to `search.remote_cache` (removed when it is empty): the URL may hold a password, which a
// command line would show to every user of the machine. This process's own environment is left
// as it is. `on_candidate(count)` reports how many candidates the current worker has started.
IsolatedOutcome tune_in_worker(const std::string& self, int device, const Shape& shape,
                               const SearchChoice& search,
                               double watchdog_seconds,
                               const std::function<void(int started)>& on_candidate);

// Worker side: tunes `shape` on `device`, skipping `skip` (recorded with their reasons), and
// speaks the protocol above on stdout. Returns the process exit code.
int run_worker(int device, const Shape& shape, const SearchChoice& search,
               const std::map<std::string, std::string>& skip, const std::string& lease_owner);

}  // namespace tilemm::cli
