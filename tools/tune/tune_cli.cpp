#include "tune_cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <map>

#include "cache_commands.hpp"
#include "cli_common.hpp"
#include "isolated_tuning.hpp"
#include "kernel_sources.hpp"
#include "precompile.hpp"
#include "provenance.hpp"
#include "remote_commands.hpp"
#include "text_fields.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tune_command.hpp"

namespace tilemm::cli {
namespace {

// One message for every value that is not a dimension, whatever is wrong with it (a sign, a
// letter, too many digits, out of range), so that 99999999999 and 2147483648 read alike.
std::int64_t parse_dimension(const std::string& text, const char* option) {
  const bool digits = !text.empty() && text.size() <= 10 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const long long v = digits ? std::stoll(text) : 0;
  if (v < 1 || v > 2147483647)
    throw InvalidArgument(option, "'" + text + "' is not an integer between 1 and 2147483647");
  return v;
}


}  // namespace

std::vector<Shape> parse_sizes(const std::string& text) {
  if (text.empty()) throw InvalidArgument("--sizes", "needs at least one size");
  std::vector<Shape> shapes;
  for (const auto& part : detail::split(text, ',')) {
    const auto n = parse_dimension(part, "--sizes");
    shapes.push_back({n, n, n});
  }
  return shapes;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  if (text.empty()) throw InvalidArgument("--shapes", "needs at least one shape");
  std::vector<Shape> shapes;
  for (const auto& part : detail::split(text, ',')) {
    const auto dims = detail::split(part, 'x');
    if (dims.size() != 3)
      throw InvalidArgument("--shapes", "'" + part + "' is not of the form MxNxK");
    shapes.push_back({parse_dimension(dims[0], "--shapes"), parse_dimension(dims[1], "--shapes"),
                      parse_dimension(dims[2], "--shapes")});
  }
  return shapes;
}

int run_tune_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                 bool err_is_terminal) {
  tool::ToolCli cli(kName,
                    "Tune tilemm's SGEMM kernels for this machine's GPUs, and manage the tuning "
                    "cache.\nExactly one action per run: tuning (--sizes and/or --shapes), --list, "
                    "--export, --import, --clear or --precompile.\n",
                    out, err);
  CLI::App& app = cli.app();
  std::vector<std::string> size_lists, shape_lists, archs;
  std::string device, cache, export_file, import_file, device_key;
  bool force = false, as_json = false, list = false, clear = false, precompile = false;
  app.add_option("--sizes", size_lists, "Tune square shapes N x N x N, e.g. 512,1024,4096 (repeatable)")
      ->option_text("LIST")->allow_extra_args(false);
  app.add_option("--shapes", shape_lists, "Tune M x N x K shapes, e.g. 1024x512x256,4096x4096x64 (repeatable; after --sizes)")
      ->option_text("LIST")->allow_extra_args(false);
  app.add_option("--device", device, "Tuning: GPU ordinal, or 'all' (one thread per GPU); default: the current one")
      ->option_text("N|all");
  app.add_flag("--force", force, "Tuning: re-tune shapes that have a fresh result (cached or preloaded)");
  SearchChoice search;
  search.budget_ms = Options::budget_from_environment();
  bool exhaustive = false;
  app.add_option("--budget-ms", search.budget_ms,
                 "Tuning: milliseconds each shape's search may take; 0 is --exhaustive (default: $TILEMM_TUNE_BUDGET_MS, else 2000)")
      ->option_text("MS")
      ->check(tool::number_between(0, 86400000));
  app.add_flag("--exhaustive", exhaustive,
               "Tuning: time every candidate in full instead of a budgeted search (tens of seconds per shape)");
  bool no_vendor = false;
  app.add_flag("--no-vendor", no_vendor,
               "Tuning: tilemm's own kernels only, no cuBLASLt candidates (as TILEMM_VENDOR=off)");
  std::string precision = to_string(Options::precision_from_environment());
  app.add_option("--precision", precision,
                 "Tuning: highest (FP32), high (3xTF32 tensor cores) or medium (one TF32 pass) "
                 "(default: $TILEMM_PRECISION, else highest)")
      ->option_text("MODE")
      ->check(CLI::Validator(
          [](std::string& p) -> std::string {
            return parse_precision(p) ? "" : "'" + p + "' is not highest, high or medium";
          },
          "MODE"));
  app.add_flag("--json", as_json, "Tuning: print the results as JSON on stdout");
  app.add_flag("--list", list, "List the cache's entries (and the preloaded ones) with source and freshness");
  app.add_option("--export", export_file, "Write the cache's entries to this JSON file ('-': stdout)")
      ->option_text("FILE|-");
  app.add_option("--import", import_file, "Validate this JSON file and add its entries, all or nothing")
      ->option_text("FILE");
  app.add_flag("--clear", clear, "Remove every entry and CUBIN from the cache");
  app.add_flag("--precompile", precompile,
               "Compile every variant for the GPUs present into the cache, so tunings compile nothing");
  app.add_option("--arch", archs, "With --precompile: these architectures (sm_XY) instead of the GPUs'")
      ->option_text("SM_XY")
      ->check(CLI::Validator(
          [](std::string& a) -> std::string {
            const bool ok = a.size() >= 5 && a.size() <= 6 && a.rfind("sm_", 0) == 0 &&
                            std::all_of(a.begin() + 3, a.end(), [](char c) { return c >= '0' && c <= '9'; });
            return ok ? "" : "'" + a + "' is not an architecture such as sm_90";
          },
          "SM_XY"));
  app.add_option("--device-key", device_key, "With --list or --export: only this device model's entries")
      ->option_text("KEY");
  app.add_option("--cache", cache, "SQLite cache file (default: see Cache below)")->option_text("PATH");
  std::string remote, shapes_file;
  add_fleet_options(app, remote, shapes_file);
  Isolation isolation;
  bool in_process = false, worker = false;
  std::vector<std::string> skips;
  std::string lease_owner;
  app.add_option("--watchdog-seconds", isolation.watchdog_seconds,
                 "Tuning: kill a worker process that shows no progress for this long (1 to 86400; default 120)")
      ->option_text("SECONDS")
      ->check(tool::number_between(1, 86400));
  app.add_flag("--in-process", in_process,
               "Tuning: no worker processes (a crashing or hanging candidate then takes tilemm-tune "
               "down)");
  // The worker side of the isolation protocol (tools/tune/isolated_tuning.hpp); not for users.
  app.add_flag("--worker", worker)->group("");
  app.add_option("--skip", skips)->group("");
  app.add_option("--lease-owner", lease_owner)->group("");
  cli.set_version(std::string(kName) + " " + TILEMM_VERSION + " (" + build_versions_text() + ")");
  cli.set_usage(
      "tilemm-tune (--sizes LIST | --shapes LIST)... [--device N|all] [--force] [--json]\n"
      "            [--budget-ms MS | --exhaustive] [--precision highest|high|medium] [--no-vendor]\n"
      "            [--watchdog-seconds SECONDS | --in-process] [--cache PATH]\n"
      "tilemm-tune --list [--device-key KEY] [--cache PATH]\n"
      "tilemm-tune --export FILE|- [--device-key KEY] [--cache PATH]\n"
      "tilemm-tune --import FILE [--cache PATH]\n"
      "tilemm-tune --clear [--cache PATH]\n"
      "tilemm-tune --precompile [--arch SM_XY]... [--cache PATH]\n"
      "tilemm-tune (--shapes-file FILE | --list | --export FILE|- | --import FILE | --clear) --remote URL");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-tune --sizes 512,1024,4096     tune three squares on the current GPU\n"
      "  tilemm-tune --shapes 4096x4096x64 --device all --json > result.json\n"
      "  tilemm-tune --force --exhaustive --sizes 3000   re-measure every candidate of 3000^3\n"
      "  tilemm-tune --precision high --sizes 4096   tune 3xTF32 (tensor-core) kernels for 4096^3\n"
      "  tilemm-tune --list                    what is cached and preloaded, fresh or stale\n"
      "\n"
      "A shape with a fresh result (in the cache, or preloaded for this GPU model) is printed, not\n"
      "tuned again; --force measures it anew. Tuning needs a GPU; the other actions do not.\n"
      "\n"
      "Cache: --cache PATH, else $TILEMM_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/tilemm/tuning.db\n"
      "  (now: " + cache_path() + ")\n"
      "\n" + tool::exit_codes_help() + "\n"
      "  3  --list or --export found the cache file damaged and left it in place: the output\n"
      "     lacks its entries (the next tuning, gemm() call, --import or --clear replaces it)\n");
  if (const auto done = cli.parse(argc, argv)) return *done;

  // Repeated --sizes/--shapes add up, sizes first.
  std::string sizes, shapes;
  for (const auto& part : size_lists) sizes += (sizes.empty() ? "" : ",") + part;
  for (const auto& part : shape_lists) shapes += (shapes.empty() ? "" : ",") + part;
  const bool tune = !size_lists.empty() || !shape_lists.empty() || !shapes_file.empty();
  const int actions = int(tune) + int(list) + int(!export_file.empty()) + int(!import_file.empty()) + int(clear) + int(precompile);
  if (actions == 0) return cli.usage_error("nothing to do: give --sizes or --shapes to tune, or one of --list, --export, --import, --clear, --precompile");
  if (actions > 1) return cli.usage_error("give only one of tuning (--sizes/--shapes), --list, --export, --import, --clear, --precompile");
  if (!archs.empty() && !precompile) return cli.usage_error("--arch only applies to --precompile");
  if (!device_key.empty() && !list && export_file.empty()) return cli.usage_error("--device-key only applies to --list and --export");
  const bool budget_given = app.count("--budget-ms") > 0;
  const bool precision_given = app.count("--precision") > 0;
  if ((force || as_json || !device.empty() || in_process || budget_given || exhaustive ||
       precision_given) &&
      !tune)
    return cli.usage_error("--force, --json, --device, --budget-ms, --exhaustive, --precision and --in-process only apply to tuning (--sizes/--shapes)");
  if (budget_given && exhaustive) return cli.usage_error("give --budget-ms or --exhaustive, not both");
  if (exhaustive) search.budget_ms = 0.0;
  search.force = force;
  search.precision = *parse_precision(precision);  // checked by the option's validator
  search.vendor = !no_vendor && Options::vendor_from_environment();

  try {
    std::vector<Shape> todo;
    if (!size_lists.empty()) todo = parse_sizes(sizes);
    if (!shape_lists.empty()) {
      const auto more = parse_shapes(shapes);
      todo.insert(todo.end(), more.begin(), more.end());
    }
    for (const auto& shape : shapes_file.empty() ? std::vector<Shape>{} : read_shapes_file(shapes_file)) todo.push_back(shape);
    if (!remote.empty()) {
      check_remote_url(remote);
      search.remote_cache = remote;  // the tunings' Options, here and in the workers
    }
    if (tune && device != "all" && !device.empty()) parse_ordinal(device);
    if (!cache.empty()) {
      ContextSettings settings;  // the environment's, but for the cache
      settings.cache_path = cache;
      configure_default_context(std::move(settings));
    }
    const std::string path = cache_path();
    if (worker) {
      if (todo.size() != 1 || device.empty()) return cli.usage_error("--worker needs one shape and --device");
      std::map<std::string, std::string> skip;
      for (const auto& s : skips) {
        const auto eq = s.find('=');
        skip[s.substr(0, eq)] = eq == std::string::npos ? "failed in an earlier worker" : s.substr(eq + 1);
      }
      return run_worker(static_cast<int>(parse_ordinal(device)), todo[0], search, skip, lease_owner);
    }
    isolation.enabled = !in_process;
    if (!remote.empty())
      return run_remote({remote, device_key, export_file, import_file, device, tune, list, clear, precompile, isolation.enabled, search.force, search.precision, search.vendor},
                        todo, [&](const Shape& s) { return tune_command({s}, device, search, as_json, isolation, out, err, err_is_terminal); }, out, err);
    if (tune) return tune_command(todo, device, search, as_json, isolation, out, err, err_is_terminal);
    if (list) return list_command(path, device_key, out, err);
    if (!export_file.empty()) return export_command(path, device_key, export_file, out, err);
    if (!import_file.empty()) return import_command(path, import_file, out, err);
    if (precompile) return precompile_command(path, archs, out, err, err_is_terminal);
    return clear_command(path, out, err);
  } catch (const InvalidArgument& e) {
    if (tool::is_option_error(e)) return cli.usage_error(tool::describe(e));
    return failure(err, tool::describe(e) + " (nothing was changed)");
  } catch (const std::exception& e) {
    return failure(err, tool::describe(e));
  }
}

}  // namespace tilemm::cli
