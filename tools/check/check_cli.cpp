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

#ifndef TILEMM_VERSION
#define TILEMM_VERSION "unknown"
#endif

namespace tilemm::check {
namespace {

constexpr int kOk = 0, kFailure = 1, kUsage = 2;

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
  CLI::App app{"Check tilemm's GEMM entry points against a float64 reference on random cases: "
               "every layout, op, shape class, leading-dimension padding, pointer offset, "
               "alpha/beta and batch layout, on this machine's GPU.",
               "tilemm-check"};
  std::int64_t cases = 2000, only_case = -1, max_dim = DrawLimits{}.max_dim, max_failures = 10;
  std::string seed_text, tuning = "off", effort = "quick", cache;
  app.add_option("--cases", cases, "How many cases to run (default 2000)")->type_name("N")->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}).description(""));
  app.add_option("--seed", seed_text, "Seed of the cases (default: a random one, printed)")->type_name("SEED");
  app.add_option("--case", only_case, "Run only this case of the seed (to reproduce a failure)")->type_name("INDEX")->check(CLI::Range(std::int64_t{0}, std::int64_t{100000000}).description(""));
  app.add_option("--tuning", tuning, "off: serve every call without tuning (fallback or stored winners, as TILEMM_TUNE=off); on: tune every new shape first")
      ->type_name("off|on")->check(CLI::IsMember({"off", "on"}).description(""));
  app.add_option("--effort", effort, "With --tuning on: quick (default, as TILEMM_TUNE_EFFORT=quick) or standard timing")
      ->type_name("quick|standard")->check(CLI::IsMember({"quick", "standard"}).description(""));
  app.add_option("--cache", cache, "Tuning cache to use (default: with --tuning on, a scratch cache removed at the end; with --tuning off, the usual cache)")->type_name("PATH");
  app.add_option("--max-dim", max_dim, "Largest M, N or K drawn (default 1500)")->type_name("N")->check(CLI::Range(std::int64_t{1}, std::int64_t{65536}).description(""));
  app.add_option("--max-failures", max_failures, "Stop after this many failed cases (default 10)")->type_name("N")->check(CLI::Range(std::int64_t{1}, std::int64_t{100000000}).description(""));
  app.set_version_flag("--version", std::string("tilemm-check ") + TILEMM_VERSION);
  app.footer(
      "Exit codes: 0 every case passed; 1 a case failed, or no CUDA device; 2 a usage error.\n"
      "A failure prints every parameter of its case and the command that runs it again.\n"
      "Examples:\n"
      "  tilemm-check --cases 10000 --seed 7\n"
      "  tilemm-check --cases 200 --tuning on\n"
      "  tilemm-check --seed 7 --case 1234\n");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return kOk;
  } catch (const CLI::CallForVersion&) {
    out << app.version() << "\n";
    return kOk;
  } catch (const CLI::ParseError& e) {
    err << "tilemm-check: error: " << e.what() << "; see 'tilemm-check --help'\n";
    return kUsage;
  }
  std::uint64_t seed = 0;
  if (seed_text.empty()) {
    seed = random_seed();
  } else if (seed_text.size() > 19 || seed_text.find_first_not_of("0123456789") != std::string::npos) {
    err << "tilemm-check: error: --seed '" << seed_text << "' is not a non-negative integer below 10^19; see 'tilemm-check --help'\n";
    return kUsage;
  } else {
    seed = std::stoull(seed_text);
  }

  // The environment is set before the library reads it: the C API takes its options from it.
  std::optional<ScratchFolder> scratch;
  try {
    const bool tune = tuning == "on";
    setenv("TILEMM_TUNE", tune ? "on_miss" : "off", 1);
    if (tune) setenv("TILEMM_TUNE_EFFORT", effort.c_str(), 1);
    if (!cache.empty()) {
      setenv("TILEMM_CACHE", cache.c_str(), 1);
    } else if (tune) {
      scratch.emplace();
      setenv("TILEMM_CACHE", scratch->file("tuning.db").c_str(), 1);
    }
    if (device_count() == 0) {
      err << "tilemm-check: error: no CUDA device found; the check runs every case on a GPU\n";
      return kFailure;
    }
    const DeviceInfo& device = current_device();
    out << "tilemm-check " << TILEMM_VERSION << " on " << device.name << " [" << device.ordinal
        << "], seed " << seed << ", tuning " << tuning << (tune ? " (" + effort + " effort)" : "")
        << ", cache " << cache_path() << (scratch ? " (scratch)" : "") << "\n" << std::flush;

    Options options;  // the C++ entry points get the same policy as the C API
    options.policy = tune ? TunePolicy::tune_on_miss : TunePolicy::off;
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
    return failed == 0 ? kOk : kFailure;
  } catch (const std::exception& e) {
    err << "tilemm-check: error: " << e.what() << "\n";
    return kFailure;
  }
}

}  // namespace tilemm::check
