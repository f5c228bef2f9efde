// Ranks a shape's candidates before anything is timed, from what this device already measured:
// the candidate tables of its tuned shapes (the SQLite cache's and the preloaded ones). A
// budgeted search times the best-ranked few and a small exploration set instead of the whole
// space (docs/tuning.md, budgeted search).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tilemm/variant.hpp"

namespace tilemm::tuner {

// One tuned shape of this device: the medians of its candidates that were timed in full.
struct MeasuredShape {
  std::int64_t M = 0, N = 0, K = 0;
  std::map<std::string, double> median_ms;  // by variant name
};

struct RankedCandidate {
  Variant variant;
  // The predicted median on the problem; infinity when no measured shape timed this variant.
  double predicted_ms = 0.0;
  int basis = 0;  // how many measured shapes the prediction comes from
  // Blocks in the variant's grid on the problem: variants with the same grid (the same tile and K
  // split) fill the SMs alike, so the exploration set takes one of each grid first.
  std::uint64_t grid_blocks = 0;
};

// How far the shape M x N x K is from `p`'s: |log M/M_p| + |log N/N_p| + |log K/K_p| (a dimension
// below 1 counts as 1). The one nearness of shapes: the ranking's nearest measured shapes, the
// history's nearest entries (src/dispatch/tuning_history.hpp) and the fallback's nearest tuned
// shape.
double log_distance(std::int64_t M, std::int64_t N, std::int64_t K, const Problem& p);

// How a candidate's time on a measured shape carries over to the problem: a tile kernel's time is
// its number of waves over the SMs times the time of one wave, which grows with the K each block
// covers. So the prediction from shape e is t_e * loops(problem) / loops(e) * K / K_e, loops being
// ceil(blocks / SMs) of the family's launch geometry, or for a persistent kernel (its blocks
// share every tile's K loop) tiles / blocks. Exact for the same shape; close for near ones, which
// is why only the nearest shapes (in log M, log N, log K) predict.
double carry_over(const Variant& v, const Problem& from, double from_ms, const Problem& to,
                  int sm_count);

// Every candidate of `space` (variants that can run `problem`), fastest predicted first: each
// variant's prediction is the median of carry_over() from the `neighbours` nearest measured shapes
// that timed it. `history` holds shapes of the problem's class only (the caller filters: an
// alignment or stride class changes which variants run and how fast). Variants that no measured shape timed come last, ordered
// by how close their block count is to a couple of waves (a prior that favours tiles that fill the
// SMs without a long tail), then by name. Deterministic.
std::vector<RankedCandidate> rank_candidates_by_history(const std::vector<Variant>& space,
                                                        const Problem& problem, int sm_count,
                                                        const std::vector<MeasuredShape>& history,
                                                        int neighbours = 3);

// Which of the ranked candidates a budgeted search times: the first `best` of the ranking, plus
// `explore` more, so that a poor prediction does not hide the winner: first the best-ranked
// candidate of each family not chosen yet, then of each grid not chosen yet (in ranking order),
// then, if grids run out, candidates spread evenly over the rest of the ranking. All of them when there are no more than
// best + explore.
std::vector<RankedCandidate> budgeted_selection(const std::vector<RankedCandidate>& ranked,
                                                int best, int explore);

}  // namespace tilemm::tuner
