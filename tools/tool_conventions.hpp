// The conventions every tilemm command-line tool follows (all nine in docs/cli.md, and any new
// one), written once:
//   - exit codes: 0 success (also --help and --version), 1 failure, 2 usage error;
//   - every error is one line on stderr, "<tool>: error: <message>", and a usage error adds
//     "; see '<tool> --help'"; a library message loses its "tilemm: " prefix so the line names
//     one program, not two;
//   - --help prints a usage synopsis, the options with named values, and a footer (examples, the
//     exit codes); --version prints "<tool> <tilemm version>"; the synopsis names every option;
//   - one vocabulary: --sizes LIST (square N x N x N), --shapes LIST (M x N x K), --random N
//     (seeded random shapes) with --seed S, --cache PATH, --csv FILE, --ms-per-case MS.
//
// Use (link the CMake target tilemm_tool_conventions):
//   tilemm::tool::ToolCli cli("tilemm-x", "What it does.", std::cout, std::cerr);
//   cli.app().add_option("--sizes", sizes, "...")->option_text("LIST");
//   cli.set_usage("tilemm-x [--sizes LIST]");
//   cli.set_footer("Examples:\n  tilemm-x --sizes 512\n\n" + tilemm::tool::exit_codes_help());
//   if (const auto done = cli.parse(argc, argv)) return *done;
//   return cli.run([&] { ...; return tilemm::tool::kSuccess; });
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace tilemm::tool {

constexpr int kSuccess = 0;     // done; also --help and --version
constexpr int kFailure = 1;     // anything that is not the command line's fault
constexpr int kUsageError = 2;  // the command line is wrong: nothing was run

// The one error line: "<tool>: error: <message>\n". A leading "tilemm: " (the library's prefix)
// is dropped and newlines become spaces, so the line is one line naming one program.
std::string error_line(const std::string& tool, const std::string& message);

// `message` without the library's leading "tilemm: ", if it has one.
std::string without_library_prefix(const std::string& message);

// What an exception says, for an error line. A tilemm::InvalidArgument about a command-line
// option (its argument() starts with "--") reads "<option>: <why>"; anything else is its what()
// without the library prefix.
std::string describe(const std::exception& e);

// Whether `e` is a tilemm::InvalidArgument about a command-line option (a usage error).
bool is_option_error(const std::exception& e);

// Validators for option values, with messages in the same words as tilemm-tune's sizes:
// "'<text>' is not an integer between <low> and <high>" / "... a number ...".
CLI::Validator integer_between(long long low, long long high);
CLI::Validator number_between(double low, double high);

// The "Exit codes:" paragraph of a --help footer, identical for every tool.
std::string exit_codes_help();

// The failure message of a tool that needs a GPU on a machine without one, in the library's
// words: "no CUDA device (or no driver) found; <what needs it>".
std::string no_device(const std::string& what_needs_it);

// The failure message about a file: "cannot <action> '<file>': <why>", e.g.
// cannot("write", "out.csv", "No such file or directory").
std::string cannot(const std::string& action, const std::string& file, const std::string& why);

// One tool's command line: a CLI11 app set up with the conventions above.
class ToolCli {
 public:
  // `name` is the program's name as users type it; `description` the first line of --help.
  // Adds --version ("<name> <tilemm version>"); -h/--help comes with CLI11.
  ToolCli(std::string name, const std::string& description, std::ostream& out, std::ostream& err);

  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }

  // The synopsis --help prints after "Usage:", one form per line (replaces "[OPTIONS]").
  void set_usage(const std::string& lines);
  // Text after the options in --help: examples, environment, exit_codes_help().
  void set_footer(const std::string& text) { app_.footer(text); }
  // Replaces --version's text (tilemm-tune adds its template hash).
  void set_version(const std::string& text);

  // Parses the command line. Returns the exit code when the run ends here: kSuccess after
  // printing --help or --version on `out`, kUsageError after one error line on `err`. Returns
  // nullopt when the tool should go on.
  std::optional<int> parse(int argc, const char* const* argv);

  // Writes "<name>: error: <message>; see '<name> --help'" and returns kUsageError.
  int usage_error(const std::string& message) const;
  // Writes "<name>: error: <message>" and returns kFailure.
  int failure(const std::string& message) const;

  // Runs the tool's work and returns its exit code; an exception becomes one error line: a usage
  // error for an option's InvalidArgument (is_option_error), a failure for anything else.
  int run(const std::function<int()>& body) const;

 private:
  std::string name_;
  std::ostream& out_;
  std::ostream& err_;
  CLI::App app_;
  std::string version_;
};

}  // namespace tilemm::tool
