#include "tool_conventions.hpp"

#include <memory>
#include <sstream>
#include <utility>

#include "tilemm/error.hpp"

namespace tilemm::tool {
namespace {

constexpr const char* kLibraryPrefix = "tilemm: ";

// CLI11's help, with the tool's own synopsis in place of "Usage: <name> [OPTIONS]".
class SynopsisFormatter : public CLI::Formatter {
 public:
  explicit SynopsisFormatter(std::string usage) : usage_(std::move(usage)) {}
  std::string make_usage(const CLI::App* app, std::string name) const override {
    if (usage_.empty()) return CLI::Formatter::make_usage(app, std::move(name));
    std::string text = "Usage:";
    std::size_t begin = 0;
    while (begin < usage_.size()) {
      std::size_t end = usage_.find('\n', begin);
      if (end == std::string::npos) end = usage_.size();
      text += "\n  " + usage_.substr(begin, end - begin);
      begin = end + 1;
    }
    return text + "\n";
  }

 private:
  std::string usage_;
};

}  // namespace

std::string without_library_prefix(const std::string& message) {
  const std::string prefix = kLibraryPrefix;
  return message.compare(0, prefix.size(), prefix) == 0 ? message.substr(prefix.size()) : message;
}

std::string error_line(const std::string& tool, const std::string& message) {
  std::string line = without_library_prefix(message);
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  return tool + ": error: " + line + "\n";
}

bool is_option_error(const std::exception& e) {
  const auto* invalid = dynamic_cast<const InvalidArgument*>(&e);
  return invalid != nullptr && invalid->argument().rfind("--", 0) == 0;
}

std::string describe(const std::exception& e) {
  const std::string what = without_library_prefix(e.what());
  if (!is_option_error(e)) return what;
  // InvalidArgument's what() is "tilemm: invalid argument '<argument>': <why>" (error.hpp).
  const auto& argument = dynamic_cast<const InvalidArgument&>(e).argument();
  const std::string head = "invalid argument '" + argument + "': ";
  if (what.compare(0, head.size(), head) != 0) return what;
  return argument + ": " + what.substr(head.size());
}

CLI::Validator integer_between(long long low, long long high) {
  return CLI::Validator(
      [low, high](std::string& text) {
        long long value = 0;
        const bool digits = !text.empty() && text.size() <= 18 &&
                            text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && CLI::detail::lexical_cast(text, value) && value >= low && value <= high)
          return std::string();
        return "'" + text + "' is not an integer between " + std::to_string(low) + " and " +
               std::to_string(high);
      },
      "");
}

CLI::Validator number_between(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= low && value <= high)
          return std::string();
        std::ostringstream range;
        range << low << " and " << high;
        return "'" + text + "' is not a number between " + range.str();
      },
      "");
}

std::string exit_codes_help() {
  return "Exit codes:\n"
         "  0  success (also --help and --version)\n"
         "  1  failure: no CUDA device where one is needed, a CUDA, cache or file error\n"
         "  2  usage error: the command line is wrong and nothing was run";
}

std::string no_device(const std::string& what_needs_it) {
  return "no CUDA device (or no driver) found; " + what_needs_it;
}

std::string cannot(const std::string& action, const std::string& file, const std::string& why) {
  return "cannot " + action + " '" + file + "': " + why;
}

ToolCli::ToolCli(std::string name, const std::string& description, std::ostream& out,
                 std::ostream& err)
    : name_(std::move(name)), out_(out), err_(err), app_(description, name_),
      version_(name_ + " " + TILEMM_VERSION) {
  app_.set_version_flag("--version", version_, "Print the version and exit");
  app_.formatter(std::make_shared<SynopsisFormatter>(""));
  app_.get_formatter()->column_width(32);
}

void ToolCli::set_usage(const std::string& lines) {
  app_.formatter(std::make_shared<SynopsisFormatter>(lines));
  app_.get_formatter()->column_width(32);
}

void ToolCli::set_version(const std::string& text) { version_ = text; }

std::optional<int> ToolCli::parse(int argc, const char* const* argv) {
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out_ << app_.help();
    return kSuccess;
  } catch (const CLI::CallForAllHelp&) {
    out_ << app_.help("", CLI::AppFormatMode::All);
    return kSuccess;
  } catch (const CLI::CallForVersion&) {
    out_ << version_ << "\n";
    return kSuccess;
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }
  return std::nullopt;
}

int ToolCli::usage_error(const std::string& message) const {
  std::string line = error_line(name_, message);
  line.pop_back();  // the newline, after which the hint goes
  err_ << line << "; see '" << name_ << " --help'\n";
  return kUsageError;
}

int ToolCli::failure(const std::string& message) const {
  err_ << error_line(name_, message);
  return kFailure;
}

int ToolCli::run(const std::function<int()>& body) const {
  try {
    return body();
  } catch (const std::exception& e) {
    return is_option_error(e) ? usage_error(describe(e)) : failure(describe(e));
  }
}

}  // namespace tilemm::tool
