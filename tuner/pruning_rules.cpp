#include "pruning_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "family_registry.hpp"
#include "tuner.hpp"

namespace tilemm::tuner {
namespace {

// "3", "2.5": std::to_string would print "3.000000".
std::string factor_text(double factor) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", factor);
  return text;
}

std::string family_hint(const Variant& v, const DeviceInfo& device, const Problem& problem) {
  return detail::find_family(v.family).pruning_hint(v, device, problem);
}

}  // namespace

const char* to_string(PruningRule rule) {
  switch (rule) {
    case PruningRule::family_hint:
      return "family hint";
    case PruningRule::underfill:
      return "underfill";
  }
  return "?";
}

CheapPruningRules::CheapPruningRules(const DeviceInfo& device, const Problem& problem,
                                     const std::vector<Variant>& candidates, std::string exempt)
    : device_(device), problem_(problem), exempt_(std::move(exempt)) {
  // Only candidates the family hints keep count: a split-K variant pruned there cannot make the
  // unsplit tiles look underfilled.
  if (device_.sm_count <= 0) return;
  for (const auto& v : candidates)
    if (variant_name(v) == exempt_ || family_hint(v, device_, problem_).empty())
      most_blocks_ = std::max(most_blocks_, detail::launched_blocks(v, problem_, device_.sm_count));
}

std::optional<Pruning> CheapPruningRules::verdict(const Variant& v) const {
  if (!exempt_.empty() && variant_name(v) == exempt_) return std::nullopt;
  // Each family's own rule: split-K where the unsplit grid already fills the SMs, aligned copies
  // of an aligned problem...
  if (std::string why = family_hint(v, device_, problem_); !why.empty())
    return Pruning{PruningRule::family_hint, std::move(why)};
  // Where some candidate gives every SM a block, one whose tiles are so large that its grid fills
  // under a quarter of the SMs runs on at most a quarter of the machine: it is taken not to win.
  if (device_.sm_count <= 0) return std::nullopt;
  const auto sms = static_cast<std::uint64_t>(device_.sm_count);
  if (most_blocks_ < sms) return std::nullopt;
  const std::uint64_t blocks = detail::launched_blocks(v, problem_, device_.sm_count);
  if (blocks * 4 >= sms) return std::nullopt;
  return Pruning{PruningRule::underfill,
                 "its " + std::to_string(blocks) + " blocks fill under a quarter of the " +
                     std::to_string(sms) + " SMs, while smaller tiles fill them all"};
}

void apply_cheap_pruning(std::vector<SearchCandidate>& candidates, const DeviceInfo& device,
                         const Problem& problem, const std::string& exempt) {
  std::vector<Variant> running;
  for (const auto& c : candidates)
    if (c.result.status == CandidateStatus::ok) running.push_back(c.variant);
  const CheapPruningRules rules(device, problem, running, exempt);
  for (auto& c : candidates) {
    if (c.result.status != CandidateStatus::ok) continue;
    if (auto pruning = rules.verdict(c.variant)) {
      c.result.status = CandidateStatus::pruned;
      c.result.reason = std::move(pruning->reason);
    }
  }
}

double give_up_ms(const TuneSettings& settings, double best_ms) {
  if (!(settings.budget_ms > 0)) return std::numeric_limits<double>::infinity();
  return settings.prune_factor * best_ms;
}

std::string give_up_reason(const TuneSettings& settings) {
  return "warm-up median above " + factor_text(settings.prune_factor) + "x the best so far";
}

}  // namespace tilemm::tuner
