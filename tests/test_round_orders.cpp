// tilemm-bench's round orders (tools/bench/round_orders.hpp): each round times every contender
// once, and every ordered pair of contenders is adjacent equally often, so that no contender
// always inherits the same predecessor's clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "round_orders.hpp"

namespace {

using tilemm::bench::balanced_round_orders;

TEST(RoundOrders, EveryRoundIsAPermutationAndEveryOrderedPairFollowsEquallyOften) {
  for (int n = 2; n <= 9; ++n) {
    const auto rounds = balanced_round_orders(n);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n : 2 * n)) << "n " << n;
    std::map<std::pair<int, int>, int> adjacent;
    for (const auto& round : rounds) {
      ASSERT_EQ(round.size(), static_cast<std::size_t>(n));
      std::vector<int> seen(n, 0);
      for (const int c : round) {
        ASSERT_GE(c, 0);
        ASSERT_LT(c, n);
        ++seen[c];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n) << "n " << n << ": not a permutation";
      for (int i = 0; i + 1 < n; ++i) ++adjacent[{round[i], round[i + 1]}];
    }
    // n (n - 1) ordered pairs, each adjacent the same number of times.
    ASSERT_EQ(adjacent.size(), static_cast<std::size_t>(n * (n - 1))) << "n " << n;
    for (const auto& [pair, count] : adjacent)
      EXPECT_EQ(count, adjacent.begin()->second)
          << "n " << n << ": " << pair.first << " then " << pair.second;
  }
}

TEST(RoundOrders, OneOrNoContenderIsOneRound) {
  EXPECT_EQ(balanced_round_orders(1), std::vector<std::vector<int>>{{0}});
  EXPECT_EQ(balanced_round_orders(0), std::vector<std::vector<int>>{{}});
}

}  // namespace
