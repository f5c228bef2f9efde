// Which candidates a stored result was chosen from: part of its key in every store (SQLite, the
// JSON exchange format, the fleet's Redis store), so that a result tuned with own kernels only
// is never served where vendor candidates (cuBLASLt) would have been timed too. Which stored
// result may serve which caller is the provenance policy's (src/dispatch/provenance.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tilemm/autotune.hpp"

namespace tilemm::cache {

enum class CandidateSet {
  with_vendor,  // the vendor providers' candidates were timed beside the own kernels
  own_only,     // own kernels only: Problem::vendor false, or no vendor provider in the process
};

// "with_vendor", "own_only": the spelling of the stores and the JSON format.
const char* to_string(CandidateSet set);
std::optional<CandidateSet> parse_candidate_set(const std::string& text);

// The set of a result recorded before the set was (SQLite schema 4, JSON format 1 and 2, a Redis
// value of those builds): with_vendor when its winner or one of its candidates is a vendor
// provider's (detail::is_vendor_candidate), since a tuning with vendor candidates lists them,
// else own_only. An entry without its candidate tables and with an own winner reads as own_only:
// at worst a caller allowing vendor candidates tunes it once more. Cost: one name split per name.
CandidateSet inferred_candidate_set(const std::string& winner,
                                    const std::vector<CandidateResult>& candidates);

}  // namespace tilemm::cache
