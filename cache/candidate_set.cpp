#include "candidate_set.hpp"

#include <algorithm>

#include "candidate_provider.hpp"

namespace tilemm::cache {

const char* to_string(CandidateSet set) {
  return set == CandidateSet::own_only ? "own_only" : "with_vendor";
}

std::optional<CandidateSet> parse_candidate_set(const std::string& text) {
  if (text == "with_vendor") return CandidateSet::with_vendor;
  if (text == "own_only") return CandidateSet::own_only;
  return std::nullopt;
}

CandidateSet inferred_candidate_set(const std::string& winner,
                                    const std::vector<CandidateResult>& candidates) {
  const bool vendor =
      detail::is_vendor_candidate(winner) ||
      std::any_of(candidates.begin(), candidates.end(),
                  [](const CandidateResult& c) { return detail::is_vendor_candidate(c.variant); });
  return vendor ? CandidateSet::with_vendor : CandidateSet::own_only;
}

}  // namespace tilemm::cache
