// Opening the cache the way an application needs it: never fatal. A damaged file is moved aside
// and replaced; a location that cannot be written (or a newer schema) gives in-memory operation.
#pragma once

#include <memory>
#include <string>

#include "cache_trust.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

struct OpenedStore {
  std::unique_ptr<TuningStore> store;
  bool persistent = false;  // false: an in-memory store, results last for this process only
  std::string warning;      // one line for the user when something was not as expected
  // Whether the store's CUBINs may be loaded (cache_trust.hpp), decided once, as it was opened.
  // An in-memory store is this process's own and always may.
  CacheTrust code_trust;
};

// Opens the store at `path`, creating its folder (new folders 0700) and file (0600). If the file
// is damaged (not a database, failed quick_check), it is renamed to "<path>.corrupt-<UTC
// timestamp>" under a lock file, so that several processes finding it at once move it only once,
// and a fresh store is created. Any other failure gives an in-memory store. Never throws for a
// bad cache. Cost: opening SQLite (and a quick_check) plus a few stat() calls for code_trust.
OpenedStore open_store(const std::string& path);

}  // namespace tilemm::cache
