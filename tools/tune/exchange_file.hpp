// The JSON files of --import and --export, for the local cache and the fleet's store alike: an
// error names the file the user gave and says why in plain words, never the standard library's
// (docs/cli.md, "Files").
#pragma once

#include <fstream>
#include <functional>
#include <ostream>
#include <string>

#include "tuning_store.hpp"

namespace tilemm::cli {

// `file` opened to read. Throws Error "cannot import '<file>': <why>" (is a directory, or the
// system's reason).
std::ifstream open_import_file(const std::string& file);

// Reads all of `file` through the entry reader, keeping nothing, so that a bad file is refused
// before anything changes. Throws Error "cannot import '<file>': <where>: <why> (nothing was
// changed)".
void validate_import_file(const std::string& file);

// Reads `file`'s entries (after validate_import_file) into `add`, each marked "imported".
// Returns how many.
std::size_t read_import_file(const std::string& file,
                             const std::function<void(cache::StoredEntry&&)>& add);

// Where --export writes: `out` for "-", else `<file>.tmp`, renamed to `file` by commit() so that
// a reader never sees half a file, and removed if commit() is never reached. Errors are Error
// "cannot write '<file>': <why>", naming the file the user gave.
class ExportFile {
 public:
  ExportFile(const std::string& file, std::ostream& out);
  ~ExportFile();
  ExportFile(const ExportFile&) = delete;
  ExportFile& operator=(const ExportFile&) = delete;

  std::ostream& stream() { return to_stdout_ ? out_ : file_stream_; }
  bool to_stdout() const { return to_stdout_; }
  void commit();

 private:
  std::string file_, tmp_;
  std::ostream& out_;
  bool to_stdout_;
  bool committed_ = false;
  std::ofstream file_stream_;
};

}  // namespace tilemm::cli
