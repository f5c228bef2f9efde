// The conventions every command-line tool shares (tools/tool_conventions.hpp): the error line,
// exit codes 0/1/2, complete --help and --version, one flag vocabulary; first on the shared code,
// then on each built program.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tilemm/error.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace tilemm::tool {
namespace {

TEST(ToolConventions, ErrorLineDropsTheLibraryPrefixOnceAndStaysOnOneLine) {
  EXPECT_EQ(error_line("tilemm-x", "tilemm: SQLite open of 'p' failed: busy"),
            "tilemm-x: error: SQLite open of 'p' failed: busy\n");
  EXPECT_EQ(error_line("tilemm-x", "two\nlines"), "tilemm-x: error: two lines\n");
  EXPECT_EQ(error_line("tilemm-x", "no prefix: tilemm: stays"), "tilemm-x: error: no prefix: tilemm: stays\n");
}

TEST(ToolConventions, AnOptionsInvalidArgumentReadsAsTheOptionAndWhy) {
  const InvalidArgument option("--sizes", "'0' is not an integer between 1 and 2147483647");
  EXPECT_TRUE(is_option_error(option));
  EXPECT_EQ(describe(option), "--sizes: '0' is not an integer between 1 and 2147483647");
  const InvalidArgument api("lda", "must be at least 4");
  EXPECT_FALSE(is_option_error(api));
  EXPECT_EQ(describe(api), "invalid argument 'lda': must be at least 4");
  EXPECT_EQ(describe(std::runtime_error("tilemm: no CUDA device")), "no CUDA device");
}

struct Parsed {
  std::optional<int> code;
  std::string out, err;
};

Parsed parse(std::vector<std::string> args, int* value = nullptr) {
  args.insert(args.begin(), "tilemm-x");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  ToolCli cli("tilemm-x", "Does x.", out, err);
  int ignored = 0;
  cli.app().add_option("--count", value != nullptr ? *value : ignored, "How many")
      ->option_text("N")
      ->check(integer_between(1, 10));
  cli.set_usage("tilemm-x [--count N]");
  cli.set_footer("Examples:\n  tilemm-x --count 3\n\n" + exit_codes_help());
  const auto code = cli.parse(static_cast<int>(argv.size()), argv.data());
  return {code, out.str(), err.str()};
}

TEST(ToolConventions, ParseEndsTheRunOnlyForHelpVersionAndUsageErrors) {
  int count = 0;
  Parsed p = parse({"--count", "3"}, &count);
  EXPECT_FALSE(p.code.has_value());
  EXPECT_EQ(count, 3);

  p = parse({"--help"});
  EXPECT_EQ(p.code, kSuccess);
  EXPECT_NE(p.out.find("Usage:\n  tilemm-x [--count N]\n"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("--count N"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("Examples:\n  tilemm-x --count 3"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("Exit codes:"), std::string::npos) << p.out;
  EXPECT_TRUE(p.err.empty());

  p = parse({"--version"});
  EXPECT_EQ(p.code, kSuccess);
  EXPECT_EQ(p.out.rfind("tilemm-x ", 0), 0u) << p.out;

  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--bogus"}, {"--count"}, {"--count", "11"}, {"--count", "x"}, {"stray"}}) {
    p = parse(bad);
    EXPECT_EQ(p.code, kUsageError) << bad[0];
    EXPECT_EQ(p.err.rfind("tilemm-x: error: ", 0), 0u) << p.err;
    EXPECT_NE(p.err.find("; see 'tilemm-x --help'\n"), std::string::npos) << p.err;
    EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << p.err;
  }
  p = parse({"--count", "11"});
  EXPECT_NE(p.err.find("--count: '11' is not an integer between 1 and 10"), std::string::npos) << p.err;
}

TEST(ToolConventions, RunTurnsExceptionsIntoOneLineAndAnExitCode) {
  std::ostringstream out, err;
  ToolCli cli("tilemm-x", "Does x.", out, err);
  EXPECT_EQ(cli.run([] { return kSuccess; }), kSuccess);
  EXPECT_EQ(cli.run([]() -> int { throw InvalidArgument("--sizes", "bad"); }), kUsageError);
  EXPECT_EQ(cli.run([]() -> int { throw Error(ErrorKind::no_device, "tilemm: no CUDA device"); }), kFailure);
  EXPECT_EQ(err.str(),
            "tilemm-x: error: --sizes: bad; see 'tilemm-x --help'\n"
            "tilemm-x: error: no CUDA device\n");
}

// ---- Every program built from this tree ----------------------------------------------------------

struct Result {
  int code;
  std::string out, err;
};

// Runs `program args` through the shell, stdout and stderr captured apart.
Result run_program(const std::string& program, const std::string& args) {
  char err_path[] = "/tmp/tilemm-tool-stderr-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  const std::string command = "'" + program + "' " + args + " 2>" + err_path;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  Result r{};
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::FILE* err = std::fopen(err_path, "r");
  if (err != nullptr) {
    for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), err)) > 0;) r.err.append(buffer.data(), n);
    std::fclose(err);
  }
  std::remove(err_path);
  return r;
}

struct Program {
  std::string name, path;
  std::string bad_value;  // an option with a value out of its range: a usage error
  std::string gpu_work;   // a valid command line that needs a GPU
};

std::vector<Program> programs() {
  std::vector<Program> list = {{"tilemm-tune", TILEMM_TUNE_BINARY, "--sizes 99999999999", "--sizes 64"},
                               {"tilemm-check", TILEMM_CHECK_BINARY, "--cases 0", "--cases 3"}};
#ifdef TILEMM_BENCH_BINARY
  list.push_back({"tilemm-bench", TILEMM_BENCH_BINARY, "--sizes 99999999999", "--sizes 64"});
  list.push_back({"tilemm-split-probe", TILEMM_SPLIT_PROBE_BINARY, "--sizes 99999999999", "--sizes 64"});
  list.push_back({"tilemm-dispatch-bench", TILEMM_DISPATCH_BENCH_BINARY, "--sizes 0", "--sizes 64"});
  list.push_back({"tilemm-skinny-probe", TILEMM_SKINNY_PROBE_BINARY, "--sizes 99999999999", "--shapes 1x64x64"});
  list.push_back({"tilemm-sustained-bench", TILEMM_SUSTAINED_BENCH_BINARY, "--seconds 0", "--shapes 64x64x64 --seconds 2"});
  list.push_back({"tilemm-tuning-regret", TILEMM_TUNING_REGRET_BINARY,
                  "--budgeted-cache /tmp/b.db --exhaustive-cache /tmp/e.db --random 0",
                  "--budgeted-cache /tmp/tilemm-no-b.db --exhaustive-cache /tmp/tilemm-no-e.db --random 1"});
  list.push_back({"tilemm-background-bench", TILEMM_BACKGROUND_BENCH_BINARY, "--random 0",
                  "--random 1 --cache /tmp/tilemm-no-bg.db"});
#endif
  return list;
}

TEST(ToolPrograms, HelpAndVersionExitZero) {
  for (const auto& p : programs()) {
    const Result help = run_program(p.path, "--help");
    EXPECT_EQ(help.code, 0) << p.name << help.err;
    EXPECT_NE(help.out.find("Usage:\n  " + p.name), std::string::npos) << p.name << help.out;
    EXPECT_NE(help.out.find("Examples:\n  " + p.name), std::string::npos) << p.name << help.out;
    EXPECT_NE(help.out.find(exit_codes_help()), std::string::npos) << p.name << help.out;
    for (const char* generic : {"TEXT", "FLOAT", "INT:", "[OPTIONS]"})
      EXPECT_EQ(help.out.find(generic), std::string::npos) << p.name << ": " << generic;
    EXPECT_TRUE(help.err.empty()) << p.name << help.err;

    const Result version = run_program(p.path, "--version");
    EXPECT_EQ(version.code, 0) << p.name;
    EXPECT_EQ(version.out.rfind(p.name + " 0.", 0), 0u) << p.name << version.out;
  }
}

// The lines of `help` from the one starting with `first` up to the next empty line.
std::string paragraph(const std::string& help, const std::string& first) {
  const auto begin = help.find(first);
  if (begin == std::string::npos) return "";
  const auto end = help.find("\n\n", begin);
  return help.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// Every "--name" in a synopsis, with its value's name ("LIST" in "[--shapes LIST]"), or "".
std::vector<std::pair<std::string, std::string>> options_in(const std::string& synopsis) {
  std::vector<std::pair<std::string, std::string>> found;
  static const std::regex option(R"((--[a-z][a-z0-9-]*)(?: ([A-Z][A-Za-z|=]*))?)");
  for (std::sregex_iterator it(synopsis.begin(), synopsis.end(), option), end; it != end; ++it)
    found.emplace_back((*it)[1].str(), (*it)[2].str());
  return found;
}

// The options CLI11 lists under "Options:", one a line ("  -h,--help", "  --sizes LIST  ...").
std::vector<std::pair<std::string, std::string>> listed_options(const std::string& listing) {
  std::vector<std::pair<std::string, std::string>> found;
  static const std::regex line(R"((?:^|\n) +(?:-[a-zA-Z],)?(--[a-z][a-z0-9-]*)(?: ([A-Z][A-Za-z|=]*))?)");
  for (std::sregex_iterator it(listing.begin(), listing.end(), line), end; it != end; ++it)
    found.emplace_back((*it)[1].str(), (*it)[2].str());
  return found;
}

// Complete help: every option CLI11 lists under "Options:" is also in the synopsis, so a reader of
// the usage lines alone sees every option the tool has.
TEST(ToolPrograms, TheSynopsisNamesEveryOption) {
  for (const auto& p : programs()) {
    const std::string help = run_program(p.path, "--help").out;
    const std::string usage = paragraph(help, "Usage:");
    const std::string listed = paragraph(help, "Options:");
    ASSERT_FALSE(usage.empty()) << p.name << help;
    ASSERT_FALSE(listed.empty()) << p.name << help;
    std::set<std::string> in_usage;
    for (const auto& [name, value] : options_in(usage)) in_usage.insert(name);
    std::size_t count = 0;
    for (const auto& [name, value] : listed_options(listed)) {
      if (name == "--help" || name == "--version") continue;
      ++count;
      EXPECT_TRUE(in_usage.count(name)) << p.name << ": " << name << " is missing from the synopsis:\n" << usage;
    }
    EXPECT_GT(count, 0u) << p.name << help;
  }
}

// One vocabulary: --shapes is an M x N x K list and --sizes a list of N wherever they appear; a
// count of random shapes is --random N, never --shapes N.
TEST(ToolPrograms, OneFlagMeansOneThingInEveryTool) {
  const std::map<std::string, std::string> value_of = {
      {"--shapes", "LIST"}, {"--sizes", "LIST"}, {"--random", "N"}, {"--seed", "S"},
      {"--cache", "PATH"},  {"--csv", "FILE"},   {"--ms-per-case", "MS"}, {"--max-dim", "D"}};
  std::set<std::string> seen;
  for (const auto& p : programs()) {
    const std::string help = run_program(p.path, "--help").out;
    auto options = options_in(paragraph(help, "Usage:"));
    for (const auto& listed : listed_options(paragraph(help, "Options:"))) options.push_back(listed);
    for (const auto& [name, value] : options) {
      const auto expected = value_of.find(name);
      if (expected == value_of.end()) continue;
      seen.insert(name);
      EXPECT_EQ(value, expected->second) << p.name << ": " << name << " " << value;
    }
  }
  EXPECT_TRUE(seen.count("--shapes") && seen.count("--sizes") && seen.count("--seed")) << seen.size();
#ifdef TILEMM_BENCH_BINARY
  EXPECT_TRUE(seen.count("--random")) << "the random-shape benches are built: their --random must be seen";
#endif
}

TEST(ToolPrograms, UsageErrorsExitTwoWithOneErrorLine) {
  for (const auto& p : programs()) {
    for (const std::string& args : {std::string("--bogus"), std::string("stray"), p.bad_value}) {
      const Result r = run_program(p.path, args);
      EXPECT_EQ(r.code, 2) << p.name << " " << args << ": " << r.err;
      EXPECT_EQ(r.err.rfind(p.name + ": error: ", 0), 0u) << p.name << " " << args << ": " << r.err;
      EXPECT_NE(r.err.find("; see '" + p.name + " --help'\n"), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << p.name << " " << args << ": " << r.err;
      EXPECT_TRUE(r.out.empty()) << p.name << " " << args << ": " << r.out;
    }
  }
}

TEST(ToolPrograms, WithoutAGpuTheyFailWithExitOneAndSayWhy) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is present: these would run, not fail";
  for (const auto& p : programs()) {
    // Valid command lines that need a GPU: the failure is not the command line's.
    const Result r = run_program(p.path, p.gpu_work);
    EXPECT_EQ(r.code, 1) << p.name << r.err;
    EXPECT_EQ(r.err.rfind(p.name + ": error: ", 0), 0u) << p.name << r.err;
    EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << p.name << r.err;
    EXPECT_EQ(r.err.find("tilemm: "), std::string::npos) << p.name << r.err;
  }
}

// The README says where the reason of a skipped GPU test is: in its output, which ctest keeps.
TEST(ToolPrograms, ASkippedGpuTestSaysWhyInItsOutput) {
  if (device_count() > 0) GTEST_SKIP() << "a CUDA device is present: GPU tests run, not skip";
  const Result r = run_program(TILEMM_GPU_TEST_BINARY, "");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[  SKIPPED ]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tilemm::tool
