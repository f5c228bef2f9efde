// The preloaded tuning results shipped with tilemm (cache/preloaded/*.json, embedded at build
// time) and the lookup order over them: exact device model, then same architecture.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tuning_json.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

// Every entry of every embedded preloaded file, parsed and validated (names by `names`) once per
// process: the first call's check serves every later one, so pass the running build's. A file that
// fails validation is skipped with a warning. Their source is "preloaded".
const std::vector<StoredEntry>& preloaded_entries(const NameCheck& names);

// Whether a preloaded entry counts for this device: one of its model or architecture and fresh
// for `running` (is_stale: made from this build's kernel templates, so that its winner exists and
// is the kernel that was timed; driver and NVRTC versions need not match).
bool preloaded_applies(const StoredEntry& e, const std::string& device_key, const std::string& arch,
                       const BuildVersions& running);

// The preloaded entry for this shape, class and precision among those that apply
// (preloaded_applies): first one of the exact device model, else one of another model of the
// same architecture.
std::optional<StoredEntry> find_preloaded(const std::vector<StoredEntry>& entries,
                                          const std::string& device_key, const std::string& arch,
                                          std::int64_t M, std::int64_t N, std::int64_t K,
                                          const std::string& problem_class,
                                          const BuildVersions& running,
                                          Precision precision = Precision::highest);

}  // namespace tilemm::cache
