// The SQLite store's tables and the migrations from each older schema to the current one
// (docs/cache-format.md): the one place that knows how a version's rows become the next's.
#pragma once

#include "sqlite_handle.hpp"

namespace tilemm::cache {

// The schema this build writes (PRAGMA user_version).
inline constexpr int kStoreSchemaVersion = 5;

// Creates the tables (version 0: a new file) or brings them from `version` to
// kStoreSchemaVersion. Runs inside the caller's transaction, which also sets user_version; throws
// tilemm::Error (kind cache) naming the failed statement.
void migrate_schema(Database& db, int version);

}  // namespace tilemm::cache
