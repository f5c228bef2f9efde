// The budgeted search's pruning rules (docs/tuning.md, "Pruning under a budget"), in one place:
// the cheap rules that prune a candidate before anything compiles (each family's hint, underfill)
// and the give-up of a timing whose warm-up is far slower than the best so far. They save time,
// and they can be wrong: so they shape only a search with a budget, and the exhaustive search
// (TuneSettings::budget_ms == 0, tilemm-tune --exhaustive) verifies and times in full every
// candidate that can run. A test asks them, candidate by candidate, which rule would prune what,
// and compares that with exhaustive timings (tests/test_pruning_rules_gpu.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search_candidate.hpp"
#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::tuner {

struct TuneSettings;

enum class PruningRule {
  family_hint,  // the family says the variant cannot win the problem (Family::pruning_hint)
  underfill,    // its blocks fill under a quarter of the SMs while another candidate fills them all
};
const char* to_string(PruningRule rule);

struct Pruning {
  PruningRule rule = PruningRule::family_hint;
  std::string reason;  // the candidate's reason, status pruned
};

// The cheap rules over one search's candidates. Underfill compares a candidate with the others
// (it prunes only where some candidate the family hints keep gives every SM a block), so the rules
// are built from the whole set: the variants that can run the problem (can_run), before any rule.
class CheapPruningRules {
 public:
  // `exempt`: a variant name no rule prunes (TuneSettings::highest_winner); it still counts as a
  // candidate that may fill the SMs.
  CheapPruningRules(const DeviceInfo& device, const Problem& problem,
                    const std::vector<Variant>& candidates, std::string exempt = {});
  // Which rule prunes `v`, one of the candidates, and why (the family's hint first); nullopt: it
  // is kept.
  std::optional<Pruning> verdict(const Variant& v) const;
  // The most blocks any candidate the family hints keep launches (launched_blocks).
  std::uint64_t most_blocks() const { return most_blocks_; }

 private:
  DeviceInfo device_;
  Problem problem_;
  std::string exempt_;
  std::uint64_t most_blocks_ = 0;
};

// The budgeted search's first step: every candidate still in the running (status ok) that a cheap
// rule prunes is marked pruned with the rule's reason. Nothing compiles.
void apply_cheap_pruning(std::vector<SearchCandidate>& candidates, const DeviceInfo& device,
                         const Problem& problem, const std::string& exempt);

// The warm-up give-up: under a budget, a timing stops after its probe (status pruned) when the
// probe's median is over settings.prune_factor x `best_ms`, the best median so far. Returns that
// time, or infinity for the exhaustive search (budget 0), which times every candidate in full.
double give_up_ms(const TuneSettings& settings, double best_ms);
// The reason of a candidate given up: "warm-up median above 3x the best so far".
std::string give_up_reason(const TuneSettings& settings);

}  // namespace tilemm::tuner
