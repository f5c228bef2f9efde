#include "candidate_ranking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "family_registry.hpp"

namespace tilemm::tuner {
namespace {

// The tiles' K loops the busiest SM runs, in units of one tile's: a grid runs in waves over the
// SMs, each a tile's K loop however few blocks the last holds. A persistent kernel
// (Family::persistent_blocks) shares every tile's K loop among its blocks, one per SM, so each
// runs tiles / blocks of them, not rounded up: below one when it cuts a few tiles across them all.
double tile_loops_per_sm(const Variant& v, const Problem& p, int sm_count) {
  const double tiles = double(detail::grid_blocks(v, p));
  const double launched = double(detail::launched_blocks(v, p, sm_count));
  if (launched != tiles) return tiles / std::max(1.0, launched);
  return std::max(1.0, std::ceil(tiles / std::max(1, sm_count)));
}

Problem shape_of(const MeasuredShape& e, const Problem& like) {
  Problem p = like;  // the class (alignment, strides) is the problem's: history is of its class
  p.M = e.M;
  p.N = e.N;
  p.K = e.K;
  return p;
}

// How far a grid of `blocks` is from two waves over the SMs, in log terms: the prior order of the
// variants nothing measured.
double wave_prior(std::uint64_t blocks, int sm_count) {
  return std::fabs(std::log(std::max(double(blocks), 1.0) / (2.0 * std::max(1, sm_count))));
}

}  // namespace

double log_distance(std::int64_t M, std::int64_t N, std::int64_t K, const Problem& p) {
  const auto term = [](std::int64_t a, std::int64_t b) {
    return std::fabs(std::log(double(std::max<std::int64_t>(a, 1)) /
                              double(std::max<std::int64_t>(b, 1))));
  };
  return term(M, p.M) + term(N, p.N) + term(K, p.K);
}

double carry_over(const Variant& v, const Problem& from, double from_ms, const Problem& to,
                  int sm_count) {
  const double k_ratio = double(std::max<std::int64_t>(to.K, 1)) / double(std::max<std::int64_t>(from.K, 1));
  return from_ms * tile_loops_per_sm(v, to, sm_count) / tile_loops_per_sm(v, from, sm_count) * k_ratio;
}

std::vector<RankedCandidate> rank_candidates_by_history(const std::vector<Variant>& space,
                                                        const Problem& problem, int sm_count,
                                                        const std::vector<MeasuredShape>& history,
                                                        int neighbours) {
  // Measured shapes nearest first; ties by dimensions, so the order does not depend on the input's.
  std::vector<const MeasuredShape*> near;
  for (const auto& e : history) near.push_back(&e);
  std::sort(near.begin(), near.end(), [&](const MeasuredShape* a, const MeasuredShape* b) {
    const double da = log_distance(a->M, a->N, a->K, problem),
                 db = log_distance(b->M, b->N, b->K, problem);
    if (da != db) return da < db;
    return std::tie(a->M, a->N, a->K) < std::tie(b->M, b->N, b->K);
  });

  std::vector<RankedCandidate> ranked;
  ranked.reserve(space.size());
  for (const Variant& v : space) {
    const std::string name = variant_name(v);
    std::vector<double> predictions;
    for (const MeasuredShape* e : near) {
      if (static_cast<int>(predictions.size()) >= neighbours) break;
      const auto it = e->median_ms.find(name);
      if (it == e->median_ms.end()) continue;
      predictions.push_back(carry_over(v, shape_of(*e, problem), it->second, problem, sm_count));
    }
    RankedCandidate r;
    r.variant = v;
    r.basis = static_cast<int>(predictions.size());
    r.grid_blocks = detail::grid_blocks(v, problem);
    if (predictions.empty()) {
      r.predicted_ms = std::numeric_limits<double>::infinity();
    } else {
      std::sort(predictions.begin(), predictions.end());
      const std::size_t n = predictions.size();
      r.predicted_ms = n % 2 ? predictions[n / 2] : 0.5 * (predictions[n / 2 - 1] + predictions[n / 2]);
    }
    ranked.push_back(std::move(r));
  }
  std::vector<double> prior(ranked.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) prior[i] = wave_prior(ranked[i].grid_blocks, sm_count);
  std::vector<std::size_t> order(ranked.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const RankedCandidate &x = ranked[a], &y = ranked[b];
    if (x.predicted_ms != y.predicted_ms) return x.predicted_ms < y.predicted_ms;
    if (prior[a] != prior[b]) return prior[a] < prior[b];
    return variant_name(x.variant) < variant_name(y.variant);
  });
  std::vector<RankedCandidate> out;
  out.reserve(order.size());
  for (std::size_t i : order) out.push_back(std::move(ranked[i]));
  return out;
}

std::vector<RankedCandidate> budgeted_selection(const std::vector<RankedCandidate>& ranked,
                                                int best, int explore) {
  best = std::max(best, 0);
  explore = std::max(explore, 0);
  const std::size_t total = ranked.size();
  if (total <= static_cast<std::size_t>(best + explore)) return ranked;
  std::vector<bool> taken(total, false);
  std::set<std::uint64_t> grids;
  for (std::size_t i = 0; i < static_cast<std::size_t>(best); ++i) {
    taken[i] = true;
    grids.insert(ranked[i].grid_blocks);
  }
  int left = explore;
  // First one of each family not chosen yet: a family nothing near has measured (the GEMV kernels
  // on a skinny shape) ranks last, however well it suits the problem.
  std::set<std::string> families;
  for (std::size_t i = 0; i < static_cast<std::size_t>(best); ++i) families.insert(ranked[i].variant.family);
  for (std::size_t i = best; i < total && left > 0; ++i)
    if (families.insert(ranked[i].variant.family).second) {
      taken[i] = true;
      grids.insert(ranked[i].grid_blocks);
      --left;
    }
  for (std::size_t i = best; i < total && left > 0; ++i)
    if (!taken[i] && grids.insert(ranked[i].grid_blocks).second) {
      taken[i] = true;
      --left;
    }
  // Grids ran out: evenly spaced over what is not taken yet.
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < total; ++i)
    if (!taken[i]) rest.push_back(i);
  for (int i = 0; i < left && !rest.empty(); ++i)
    taken[rest[static_cast<std::size_t>((i + 0.5) * double(rest.size()) / left)]] = true;
  std::vector<RankedCandidate> chosen;
  for (std::size_t i = 0; i < total; ++i)
    if (taken[i]) chosen.push_back(ranked[i]);
  return chosen;
}

}  // namespace tilemm::tuner
