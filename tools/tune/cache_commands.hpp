// tilemm-tune's actions on the local SQLite cache: --list (with the preloaded entries), --export,
// --import and --clear. None needs a GPU.
#pragma once

#include <ostream>
#include <string>

namespace tilemm::cli {

// The cache's entries and the preloaded ones as a table, with their source and freshness.
int list_command(const std::string& path, const std::string& device_key, std::ostream& out,
                 std::ostream& err);
// Writes the cache's entries to `file` ('-': `out`) entry by entry.
int export_command(const std::string& path, const std::string& device_key, const std::string& file,
                   std::ostream& out, std::ostream& err);
// Validates the whole file first, then adds its entries in one transaction.
int import_command(const std::string& path, const std::string& file, std::ostream& out,
                   std::ostream& err);
// Removes every entry and CUBIN.
int clear_command(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace tilemm::cli
