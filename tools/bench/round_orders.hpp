// The orders in which a benchmark times its contenders, round after round, so that each one
// follows every other equally often. Under a sustained tensor-core load the GPU lowers its clock
// to stay within its power limit, and it does so over tens of milliseconds: a contender timed
// right after a heavy one starts at a lower clock than one timed after a light one. In one fixed
// order the same contender would always inherit the same predecessor's clock; in these orders
// (a Williams design, balanced for first-order carry-over) every ordered pair of contenders is
// adjacent as often as any other.
#pragma once

#include <vector>

namespace tilemm::bench {

// Rounds of contender indices 0..n-1: each round a permutation, every ordered pair (a, b) of
// distinct contenders adjacent (b right after a) in the same number of rounds. n rounds where n
// is even, 2 n where it is odd (the mirrored rounds balance what an odd n leaves over); one
// round for n <= 1.
inline std::vector<std::vector<int>> balanced_round_orders(int n) {
  if (n <= 1) return {std::vector<int>(n > 0 ? 1 : 0, 0)};
  // The first round 0, 1, n-1, 2, n-2, ...: its adjacent differences (mod n) are all distinct, so
  // adding r (mod n) for r = 0..n-1 gives every ordered pair once.
  std::vector<int> first;
  for (int lo = 0, hi = n - 1, i = 0; lo <= hi; ++i) first.push_back(i % 2 == 0 ? lo++ : hi--);
  std::vector<std::vector<int>> rounds;
  for (int r = 0; r < n; ++r) {
    std::vector<int> round;
    for (const int c : first) round.push_back((c + r) % n);
    rounds.push_back(std::move(round));
  }
  if (n % 2 == 1)
    for (int r = 0; r < n; ++r) rounds.emplace_back(rounds[r].rbegin(), rounds[r].rend());
  return rounds;
}

}  // namespace tilemm::bench
