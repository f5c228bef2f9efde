#include "preloaded.hpp"

#include "kernel_sources.hpp"
#include "log.hpp"
#include "tilemm/error.hpp"
#include "tuning_json.hpp"

namespace tilemm::cache {

std::vector<StoredEntry> read_preloaded(const std::vector<detail::EmbeddedTemplate>& files,
                                        const NameCheck& names) {
  std::vector<StoredEntry> out;
  for (const auto& file : files) {
    try {
      for (auto& e : entries_from_json(std::string(file.source), names)) {
        e.source = "preloaded";
        out.push_back(std::move(e));
      }
    } catch (const InvalidArgument& e) {
      detail::log(detail::LogLevel::warn, "preloaded cache " + std::string(file.file) +
                                              " skipped: " + e.what());
    }
  }
  return out;
}

namespace {

// The entries of `files`, read with `names`, and how long that took at debug level ("the preloaded
// <what> (<n> entries) read in <ms> ms"). Never destroyed: a background tuning thread may still
// read them while the process exits (src/dispatch/background_tuning.cpp stops it from an exit
// handler, which runs after the destructors of statics built later than it was registered).
const std::vector<StoredEntry>* read_for_the_process(
    const std::vector<detail::EmbeddedTemplate>& files, const std::string& what,
    const NameCheck& names) {
  return new std::vector<StoredEntry>(detail::timed_step(
      [&what](const std::vector<StoredEntry>& read) {
        return "the preloaded " + what + " (" + std::to_string(read.size()) + " entries) read";
      },
      [&] { return read_preloaded(files, names); }));
}

}  // namespace

const std::vector<StoredEntry>& preloaded_entries(const NameCheck& names) {
  static const auto& all = *read_for_the_process(detail::embedded_preloaded(), "results", names);
  return all;
}

const std::vector<StoredEntry>& preloaded_headers(const NameCheck& names) {
  static const auto& all =
      *read_for_the_process(detail::embedded_preloaded_headers(), "results' keys", names);
  return all;
}

const std::vector<StoredEntry>& preloaded_timed_entries(const NameCheck& names) {
  static const auto& all = *read_for_the_process(detail::embedded_preloaded_timed(),
                                                 "results' timed candidates", names);
  return all;
}

bool preloaded_applies(const StoredEntry& e, const std::string& device_key, const std::string& arch,
                       const BuildVersions& running) {
  return (e.device_key == device_key || e.arch == arch) && !is_stale(e, running);
}

std::optional<StoredEntry> find_preloaded(const std::vector<StoredEntry>& entries,
                                          const std::string& device_key, const std::string& arch,
                                          std::int64_t M, std::int64_t N, std::int64_t K,
                                          const std::string& problem_class,
                                          const BuildVersions& running, Precision precision,
                                          CandidateSet set) {
  const StoredEntry* same_arch = nullptr;
  for (const auto& e : entries) {
    if (e.M != M || e.N != N || e.K != K || e.problem_class != problem_class ||
        e.precision != precision || e.candidate_set != set ||
        !preloaded_applies(e, device_key, arch, running))
      continue;
    if (e.device_key == device_key) return e;
    if (same_arch == nullptr) same_arch = &e;
  }
  if (same_arch != nullptr) return *same_arch;
  return std::nullopt;
}

}  // namespace tilemm::cache
