// tilemm-tune against the fleet's Redis store (docs/fleet.md): --remote URL with a tuning splits
// the shapes among the processes tuning them at once, through the fleet's leases; with --list,
// --export, --import and --clear it acts on the store instead of the local cache. And
// --shapes-file, the shapes to tune read from a file.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tilemm/autotune.hpp"
#include "tune_cli.hpp"

namespace CLI {
class App;
}

namespace tilemm::cli {

// --remote URL and --shapes-file FILE.
void add_fleet_options(CLI::App& app, std::string& remote, std::string& shapes_file);

// Checks `url`: InvalidArgument("--remote") saying what is wrong, never the password.
void check_remote_url(const std::string& url);

// The action of a run with --remote.
struct RemoteRun {
  std::string url, device_key, export_file, import_file, device;
  bool tune = false, list = false, clear = false, precompile = false;
  bool isolated = true;  // tuning in worker processes (isolated_tuning.hpp)
  bool force = false;
  Precision precision = Precision::highest;
  bool vendor = true;  // false: --no-vendor (the candidate set of the results looked for)
};

// Runs it against the store; `tune_one` is the ordinary tuning of one shape. Returns the exit
// code; throws InvalidArgument("--remote") for a combination it does not take (a usage error).
int run_remote(const RemoteRun& run, const std::vector<Shape>& shapes,
               const std::function<int(const Shape&)>& tune_one, std::ostream& out,
               std::ostream& err);

// "MxNxK" per line; blank lines and lines starting with '#' are skipped. Throws
// InvalidArgument("--shapes-file") naming the line of a bad shape, or Error when the file
// cannot be read.
std::vector<Shape> read_shapes_file(const std::string& path);

// Tunes `shapes` as one of several processes started with the same list and store: a shape whose
// fresh result the store holds for a tuning of `precision` and `vendor` (Problem::vendor: the
// candidate set, dispatch::set_serves) is done (unless `force`); a shape whose fleet lease another process holds is left
// for later; any other is tuned by `tune_one` (the ordinary tuning of one shape, which publishes
// its result) after this process took its lease for `lease_owner` (the owner the tuning's own
// lease asks under, so that it finds the lease its own). Passes over the shapes left until none
// is: a process that died leaves its lease to expire, and then another takes its shape over.
// Returns the exit code: the worst of tune_one's.
int fleet_tune(const std::vector<Shape>& shapes, const std::string& url, Precision precision,
               bool vendor, bool force, const std::string& lease_owner, const std::function<int(const Shape&)>& tune_one,
               std::ostream& out, std::ostream& err);

// The store's entries as a table, with whether each is fresh for this build and driver.
int remote_list(const std::string& url, const std::string& device_key, std::ostream& out,
                std::ostream& err);
// Writes the store's entries to `file` ('-': stdout) as they are read.
int remote_export(const std::string& url, const std::string& device_key, const std::string& file,
                  std::ostream& out, std::ostream& err);
// Validates the whole file first, then publishes its entries (source "imported").
int remote_import(const std::string& url, const std::string& file, std::ostream& out,
                  std::ostream& err);
// Removes every result from the store (leases are left to expire).
int remote_clear(const std::string& url, std::ostream& out);

}  // namespace tilemm::cli
