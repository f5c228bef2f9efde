#include "exchange_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "row_split.hpp"
#include "tilemm/error.hpp"
#include "tool_conventions.hpp"
#include "tuning_json.hpp"

namespace tilemm::cli {
namespace {

Error cannot_import(const std::string& file, const std::string& why) {
  return Error(ErrorKind::cache, "cannot import '" + file + "': " + why);
}

// Why a file failed validation, in the reader's words without its "invalid argument" framing:
// "<where>: <why>" for an entry, just "<why>" for the whole document.
std::string why_invalid(const std::exception& e) {
  std::string why = tool::without_library_prefix(e.what());
  const auto* invalid = dynamic_cast<const InvalidArgument*>(&e);
  if (invalid == nullptr) return why;
  const std::string head = "invalid argument '" + invalid->argument() + "': ";
  if (why.compare(0, head.size(), head) != 0) return why;
  why = why.substr(head.size());
  return invalid->argument() == "document" ? why : invalid->argument() + ": " + why;
}

}  // namespace

std::ifstream open_import_file(const std::string& file) {
  // A folder opens as a stream and fails only on the first read, with the standard library's words.
  if (std::filesystem::is_directory(file)) throw cannot_import(file, "is a directory");
  std::ifstream f(file, std::ios::binary);
  if (!f) throw cannot_import(file, std::strerror(errno));
  return f;
}

void validate_import_file(const std::string& file) {
  std::ifstream f = open_import_file(file);
  try {
    cache::read_entries_json(f, detail::why_not_a_known_name, [](cache::StoredEntry&&) {});
  } catch (const std::exception& e) {
    throw cannot_import(file, why_invalid(e) + " (nothing was changed)");
  }
}

std::size_t read_import_file(const std::string& file,
                             const std::function<void(cache::StoredEntry&&)>& add) {
  std::ifstream f = open_import_file(file);
  return cache::read_entries_json(f, detail::why_not_a_known_name, [&](cache::StoredEntry&& e) {
    e.source = "imported";
    add(std::move(e));
  });
}

ExportFile::ExportFile(const std::string& file, std::ostream& out)
    : file_(file), tmp_(file + ".tmp"), out_(out), to_stdout_(file == "-") {
  if (to_stdout_) return;
  if (std::filesystem::is_directory(file_))
    throw Error(ErrorKind::cache, "cannot write '" + file_ + "': is a directory");
  file_stream_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!file_stream_)
    throw Error(ErrorKind::cache, "cannot write '" + file_ + "': " + std::strerror(errno));
}

ExportFile::~ExportFile() {
  if (to_stdout_ || committed_) return;
  file_stream_.close();
  std::error_code ignored;
  std::filesystem::remove(tmp_, ignored);
}

void ExportFile::commit() {
  if (to_stdout_) return;
  const auto cannot_write = [&](const std::string& why) {
    return Error(ErrorKind::cache, "cannot write '" + file_ + "': " + why);
  };
  if (!file_stream_.flush()) throw cannot_write(std::strerror(errno));
  file_stream_.close();
  std::error_code renamed;
  std::filesystem::rename(tmp_, file_, renamed);
  if (renamed) throw cannot_write(renamed.message());
  committed_ = true;
}

}  // namespace tilemm::cli
