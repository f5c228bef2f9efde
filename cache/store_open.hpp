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

// The same for a caller that must write to that very file (tilemm-tune --import, --clear): a
// damaged file is moved aside as above (the warning says so), but where open_store would fall
// back to memory this throws tilemm::Error (kind cache) saying why. The result is persistent.
OpenedStore open_persistent_store(const std::string& path);

// What every caller that finds `path` damaged but leaves it in place (tilemm-tune --list and
// --export) tells the user, one line: that it is damaged, `why` (CacheCorrupt::reason()), and
// that the next writer will move it aside and start a fresh one.
std::string damaged_cache_note(const std::string& path, const std::string& why);

}  // namespace tilemm::cache
