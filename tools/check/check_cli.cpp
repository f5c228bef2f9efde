#include "check_cli.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "differential_run.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace tilemm::check {
namespace {

// A scratch folder for a cache that tuning random shapes may fill, removed at the end.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tilemm-check-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw Error(ErrorKind::cache, "tilemm-check: cannot create a scratch folder in " +
                                        std::filesystem::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

std::uint64_t random_seed() {
  std::random_device rd;
  return ((static_cast<std::uint64_t>(rd()) << 32) ^ rd()) % 1000000000ull;
}

}  // namespace

int run_check_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                  bool err_is_terminal) {
  tool::ToolCli cli("tilemm-check",
                    "Check tilemm's GEMM entry points against a float64 reference on random cases: "
                    "every layout, op, shape class, leading-dimension padding, pointer offset, "
                    "alpha/beta and batch layout, on this machine's GPU.\n",
                    out, err);
  std::int64_t cases = 2000, only_case = -1, max_dim = DrawLimits{}.max_dim, max_failures = 10;
  std::string seed_text, tuning = "off", effort = "quick", cache;
  CLI::App& app = cli.app();
  app.add_option("--cases", cases, "How many cases to run (default 2000)")
      ->option_text("N")->check(tool::integer_between(1, 100000000));
  app.add_option("--seed", seed_text, "Seed of the cases (default: a random one, printed)")
      ->option_text("S")->check(tool::integer_between(0, 999999999999999999));
  app.add_option("--case", only_case, "Run only this case of the seed (to reproduce a failure)")
      ->option_text("INDEX")->check(tool::integer_between(0, 100000000));
  app.add_option("--tuning", tuning,
                 "off: serve every call without tuning (stored winners, the nearest tuned shape's "
                 "or the default variant, as TILEMM_TUNE=off); on: tune each new shape first")
      ->option_text("off|on")->check(CLI::IsMember({"off", "on"}).description(""));
  app.add_option("--effort", effort, "With --tuning on: quick (default) or standard timing (TILEMM_TUNE_EFFORT)")
      ->option_text("quick|standard")->check(CLI::IsMember({"quick", "standard"}).description(""));
  app.add_option("--cache", cache,
                 "Tuning cache (default: with --tuning on, a scratch cache removed at the end; "
                 "with --tuning off, the usual one)")
      ->option_text("PATH");
  std::string precision = "highest";
  app.add_option("--precision", precision,
                 "The precision every call runs at, the C API's included, each case "
                 "checked within that precision's bound (default highest)")
      ->option_text("MODE")
      ->check(CLI::IsMember({"highest", "high", "medium"}).description(""));
  app.add_option("--max-dim", max_dim, "Largest M, N or K drawn (default 1500)")
      ->option_text("D")->check(tool::integer_between(1, 65536));
  app.add_option("--max-failures", max_failures, "Stop after this many failed cases (default 10)")
      ->option_text("N")->check(tool::integer_between(1, 100000000));
  cli.set_usage("tilemm-check [--cases N] [--seed S] [--tuning off|on] [--effort quick|standard]\n"
                "             [--precision highest|high|medium] [--cache PATH] [--max-dim D]\n"
                "             [--max-failures N]\n"
                "tilemm-check --seed S --case INDEX [--tuning off|on] [--max-dim D]");
  cli.set_footer(
      "A failure prints every parameter of its case and the command that runs it again.\n"
      "\n"
      "Examples:\n"
      "  tilemm-check --cases 10000 --seed 7\n"
      "  tilemm-check --cases 200 --tuning on\n"
      "  tilemm-check --seed 7 --case 1234\n"
      "\n" + tool::exit_codes_help() + "\nA case that fails is a failure: exit 1.\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  const std::uint64_t seed = seed_text.empty() ? random_seed() : std::stoull(seed_text);

  // The default context is configured before the library is first called: the C API takes its
  // options from it, the C++ entry points get the same ones.
  std::optional<ScratchFolder> scratch;
  return cli.run([&] {
    const bool tune = tuning == "on";
    ContextSettings settings;
    settings.options.policy = tune ? TunePolicy::tune_on_miss : TunePolicy::off;
    settings.options.precision = *parse_precision(precision);  // checked by the option
    if (tune) settings.effort = effort == "quick" ? TuneEffort::quick : TuneEffort::standard;
    if (!cache.empty()) {
      settings.cache_path = cache;
    } else if (tune) {
      scratch.emplace();
      settings.cache_path = scratch->file("tuning.db");
    }
    const Options options = settings.options;
    configure_default_context(std::move(settings));
    if (device_count() == 0) return cli.failure(tool::no_device("the check runs every case on a GPU"));
    const DeviceInfo& device = current_device();
    out << "tilemm-check " << TILEMM_VERSION << " on " << device.name << " [" << device.ordinal
        << "], seed " << seed << ", tuning " << tuning << (tune ? " (" + effort + " effort)" : "")
        << ", precision " << precision
        << ", cache " << cache_path() << (scratch ? " (scratch)" : "") << "\n" << std::flush;

    const DrawLimits limits{max_dim, DrawLimits{}.max_work};
    const std::int64_t first = only_case >= 0 ? only_case : 0;
    const std::int64_t last = only_case >= 0 ? only_case + 1 : cases;
    std::map<std::string, std::int64_t> per_entry;
    std::int64_t passed = 0, failed = 0, elements = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = first; i < last; ++i) {
      const CaseSpec c = draw_case(seed, i, limits);
      if (err_is_terminal) err << "\rcase " << i + 1 - first << " of " << last - first << std::flush;
      const CaseOutcome outcome = run_case(c, options);
      ++per_entry[to_string(c.entry)];
      elements += outcome.elements_checked;
      if (outcome.passed) {
        ++passed;
        continue;
      }
      if (err_is_terminal) err << "\r" << std::string(40, ' ') << "\r";
      out << "FAILED " << outcome.failure << "\n" << std::flush;
      if (++failed >= max_failures) {
        out << "stopping after " << failed << " failed cases (--max-failures)\n";
        break;
      }
    }
    if (err_is_terminal) err << "\r" << std::string(40, ' ') << "\r";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out << "tilemm-check: " << passed << " of " << passed + failed << " cases passed (seed " << seed
        << ", tuning " << tuning << "), " << elements << " elements of C checked in " << seconds << " s (";
    const char* sep = "";
    for (const auto& [entry, count] : per_entry) {
      out << sep << entry << " " << count;
      sep = ", ";
    }
    out << ")\n";
    return failed == 0 ? tool::kSuccess : tool::kFailure;
  });
}

}  // namespace tilemm::check
