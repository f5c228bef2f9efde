// The preloaded tuning results shipped with tilemm (cache/preloaded/*.json, embedded at build
// time) and the lookup order over them: exact device model, then same architecture.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernel_sources.hpp"
#include "tuning_json.hpp"
#include "tuning_store.hpp"

namespace tilemm::cache {

// Every entry of every embedded preloaded file, parsed and validated (names by `names`) once per
// process: the first call's check serves every later one, so pass the running build's. A file that
// fails validation is skipped with a warning. Their source is "preloaded".
// Cost: reads every candidate table, the bulk of the files (tens of milliseconds for the shipped
// H200 file); what needs no candidates asks preloaded_headers().
const std::vector<StoredEntry>& preloaded_entries(const NameCheck& names);

// The same entries without their candidate tables (each entry's candidates empty), parsed once
// per process like preloaded_entries() and independently of it: what a gemm() needs (shape,
// class, device, versions, winner, times). They come from copies of the files whose tables the
// build removed (detail::embedded_preloaded_headers(), made by cache/candidate_tables.hpp: the
// rest of the text is unchanged), read by the same validating reader; so a file skipped for a bad
// field outside its tables is skipped here too, with the same warning. The checks of the tables
// themselves (each candidate's fields, the winner among them and ok) are made by
// preloaded_entries() only; the test suite checks that both agree on every embedded file.
// Cost: a parse of a few hundred bytes per entry; no candidate is read.
const std::vector<StoredEntry>& preloaded_headers(const NameCheck& names);

// The same entries with only their timed candidates (those with samples above 0, and the
// winner), parsed once per process like the two above and from copies the build cut
// (detail::embedded_preloaded_timed(), cache/timed_candidates.hpp): what the tuning history
// reads. Cost: about a fifth of preloaded_entries()'s for the shipped H200 file.
const std::vector<StoredEntry>& preloaded_timed_entries(const NameCheck& names);

// The entry of preloaded_entries() whose key is `header`'s (device model, shape, class, precision,
// candidate set), read alone from the embedded full file where the build found its text
// (detail::embedded_preloaded_entry_spans()) and checked to read as that key and `header`'s
// winner; none where its text is not found, does not read, or reads as another entry. Cost: a
// parse of that entry's candidate table (a few hundred kilobytes), and on the first call one of
// each file's headers.
std::optional<StoredEntry> preloaded_entry_alone(const StoredEntry& header, const NameCheck& names);

// What an autotune() of a preloaded shape returns: preloaded_entry_alone(), else the entry of
// `header`'s key among preloaded_entries() (which reads every file whole), else none. Kept for
// the process once read.
std::optional<StoredEntry> preloaded_with_candidates(const StoredEntry& header,
                                                     const NameCheck& names);

// The entries of `files` (the embedded ones, or a test's), source "preloaded"; a file that fails
// validation is skipped with a warning naming it. Cost: parses every file.
std::vector<StoredEntry> read_preloaded(const std::vector<detail::EmbeddedTemplate>& files,
                                        const NameCheck& names);

// Whether a preloaded entry counts for this device: one of its model or architecture and fresh
// for `running` (is_stale: made from this build's kernel templates and timing method, so that its
// winner exists and is the kernel that was timed, the way this build times; driver and NVRTC versions need not match).
bool preloaded_applies(const StoredEntry& e, const std::string& device_key, const std::string& arch,
                       const BuildVersions& running);

// The preloaded entry for this shape, class, precision and candidate set among those that apply
// (preloaded_applies): first one of the exact device model, else one of another model of the
// same architecture.
std::optional<StoredEntry> find_preloaded(const std::vector<StoredEntry>& entries,
                                          const std::string& device_key, const std::string& arch,
                                          std::int64_t M, std::int64_t N, std::int64_t K,
                                          const std::string& problem_class,
                                          const BuildVersions& running,
                                          Precision precision = Precision::highest,
                                          CandidateSet set = CandidateSet::with_vendor);

}  // namespace tilemm::cache
