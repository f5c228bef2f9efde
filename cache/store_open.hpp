// Opening the cache the way an application needs it: never fatal. A damaged file is moved aside
// and replaced; a location that cannot be written (or a newer schema) gives in-memory operation.
#pragma once

#include <memory>
#include <string>

#include "tuning_store.hpp"

namespace tilemm::cache {

struct OpenedStore {
  std::unique_ptr<TuningStore> store;
  bool persistent = false;  // false: an in-memory store, results last for this process only
  std::string warning;      // one line for the user when something was not as expected
};

// Opens the store at `path`, creating its folder. If the file is damaged (not a database, failed
// quick_check), it is renamed to "<path>.corrupt-<UTC timestamp>" under a lock file, so that
// several processes finding it at once move it only once, and a fresh store is created. Any other
// failure gives an in-memory store. Never throws for a bad cache.
OpenedStore open_store(const std::string& path);

}  // namespace tilemm::cache
