// The stream-K work split (kernel_templates/stream_k.cuh), without a GPU: the maps themselves, on
// the host, as the kernels of tf32wgmma and streamk call them; the workspace and the limits the
// host side gives them (src/core/stream_k_split.cpp). That the templates carry the header pasted in:
// test_nvrtc_compile.cpp. On the H200: StreamK.* (test_gpu_correctness.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "stream_k_split.hpp"

namespace tilemm {
namespace {

TEST(StreamKSplit, TheWorkspaceHoldsATileAndAFlagPerBlock) {
  constexpr std::size_t kTile = 128 * 256;
  // Tiles of 128 x 256, edge tiles included.
  EXPECT_EQ(detail::stream_k_tiles(Problem::dense(1, 1, 1, 1), 128, 256), 1);
  EXPECT_EQ(detail::stream_k_tiles(Problem::dense(1281, 2560, 8, 1), 128, 256), 11 * 10);
  // One tile, one block.
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(128, 256, 8, 4), 128, 256, 8, 132),
            kTile * 4 + 4);
  // 110 tiles on 132 SMs: a block per tile, uncut (more than half the SMs have a tile).
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(1281, 2560, 8, 1), 128, 256, 8, 132),
            110 * (kTile * 4 + 4));
  // 512 tiles: a block per SM, up to the most blocks a call runs.
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(4096, 4096, 8, 4), 128, 256, 8, 132),
            132 * (kTile * 4 + 4));
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(4096, 4096, 8, 4), 128, 256, 8, 400),
            static_cast<std::size_t>(stream_k::kMaxBlocks) * (kTile * 4 + 4));
  // 32 tiles with K long enough to cut: every SM takes a share.
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(128, 8192, 8192, 4), 128, 256, 8, 132),
            132 * (kTile * 4 + 4));
  // 2^31 tiles of 1 x 1 do not fit the kernels' 32-bit tile numbers; one fewer does.
  EXPECT_NE(detail::stream_k_tiles_fit(Problem::dense(65536, 32768, 1, 1), 1, 1).find("32 bits"),
            std::string::npos);
  EXPECT_TRUE(detail::stream_k_tiles_fit(Problem::dense(2147483647, 1, 1, 1), 1, 1).empty());
}

}  // namespace
}  // namespace tilemm

// The stream-K work split (STREAM_K 1), on the host: every K tile of every tile is done by one
// block; a tile cut between blocks is finished by the block with its last K tiles, after exactly
// the blocks before it that hold its other K tiles, each of which leaves it unfinished as its first
// unit past the whole tiles, before any unit it waits in (so no block waits for a waiting block);
// the shares differ by at most one K tile, and none is empty.
TEST(StreamKSplit, EveryKTileOnceAndEveryCutTileFinishedByItsLastBlockAfterTheOthers) {
  using namespace stream_k;
  std::mt19937 rng(20261201);
  std::vector<std::tuple<long long, int, int>> cases;  // tiles, SMs, K tiles
  for (long long tiles : {1LL, 2LL, 31LL, 32LL, 66LL, 67LL, 131LL, 132LL, 133LL, 263LL, 264LL,
                          265LL, 1024LL, 4096LL})
    for (int sms : {1, 7, 132})
      for (int k_tiles : {0, 1, 2, 3, 31, 32, 128, 1024}) cases.emplace_back(tiles, sms, k_tiles);
  for (int i = 0; i < 200; ++i)
    cases.emplace_back(std::uniform_int_distribution<long long>(1, 3000)(rng),
                       std::uniform_int_distribution<int>(1, 256)(rng),
                       std::uniform_int_distribution<int>(1, 300)(rng));
  // Each case with the blocks the split runs on that many SMs (every tile cut where they are fewer
  // than the blocks), and with no more blocks than tiles.
  std::vector<std::tuple<long long, int, int>> splits;  // tiles, blocks, K tiles
  for (const auto& [tiles, sms, k_tiles] : cases) {
    splits.emplace_back(tiles, persistent_blocks(tiles, k_tiles, sms), k_tiles);
    splits.emplace_back(tiles, static_cast<int>(std::min<long long>(tiles, sms)), k_tiles);
  }
  for (const auto& [tiles, blocks, k_tiles] : splits) {
    WorkSplit w{};
    w.tiles = tiles;
    w.ctas = blocks;
    w.dp_tiles = whole_tiles(tiles, blocks, k_tiles);
    SCOPED_TRACE(std::to_string(tiles) + " tiles, " + std::to_string(blocks) + " blocks, " +
                 std::to_string(k_tiles) + " K tiles");
    ASSERT_LE(w.dp_tiles, tiles);
    std::vector<int> done(static_cast<std::size_t>(tiles * std::max(k_tiles, 1)), 0);
    std::vector<int> handed_on(static_cast<std::size_t>(blocks), -1);  // the cut tile a block leaves
    std::vector<long long> share(static_cast<std::size_t>(blocks), 0);
    std::vector<std::vector<Unit>> units(static_cast<std::size_t>(blocks));
    for (int b = 0; b < blocks; ++b)
      for_each_stream_k_unit(w, k_tiles, b, [&](const Unit& u) { units[b].push_back(u); });
    for (int b = 0; b < blocks; ++b) {
      for (std::size_t j = 0; j < units[b].size(); ++j) {
        const Unit& u = units[b][j];
        ASSERT_GE(u.tile, 0);
        ASSERT_LT(u.tile, tiles);
        ASSERT_LE(u.k_begin, u.k_end);
        if (u.tile < w.dp_tiles) {
          EXPECT_EQ(u.tile % blocks, b);
          EXPECT_EQ(u.k_begin, 0);
          EXPECT_EQ(u.k_end, k_tiles);
        } else {
          ASSERT_LT(u.k_begin, u.k_end);
          share[b] += u.k_end - u.k_begin;
        }
        for (int k = u.k_begin; k < u.k_end; ++k) ++done[u.tile * k_tiles + k];
        if (u.k_end < k_tiles) {
          // Unfinished: only a block's first unit past its whole tiles.
          EXPECT_EQ(handed_on[b], -1) << "block " << b << " hands on two tiles";
          EXPECT_TRUE(j == 0 || units[b][j - 1].tile < w.dp_tiles) << "block " << b;
          handed_on[b] = static_cast<int>(u.tile);
        }
        // A unit that waits (the tail of a cut tile) comes after the block's hand-on.
        if (u.k_begin > 0 && u.k_end == k_tiles) {
          for (std::size_t i = j + 1; i < units[b].size(); ++i)
            EXPECT_EQ(units[b][i].k_end, k_tiles) << "block " << b << " waits before it hands on";
        }
      }
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(tiles * k_tiles); ++i)
      ASSERT_EQ(done[i], 1) << "K tile " << i % k_tiles << " of tile " << i / k_tiles;
    if (tiles > w.dp_tiles) {
      const auto [lo, hi] = std::minmax_element(share.begin(), share.end());
      EXPECT_LE(*hi - *lo, 1);
      // Every block has K tiles to do, or one that waits for it would wait forever.
      EXPECT_GE(*lo, 1);
    }
    // Each cut tile's finisher waits for exactly the blocks that hand it on, all before it.
    std::vector<int> consumed(static_cast<std::size_t>(blocks), 0);
    for (int b = 0; b < blocks; ++b)
      for (const Unit& u : units[b]) {
        if (u.k_begin == 0 || u.k_end < k_tiles) continue;
        const int first = first_block_of_tile(w, k_tiles, u.tile, b);
        ASSERT_LT(first, b);
        for (int c = first; c < b; ++c) {
          EXPECT_EQ(handed_on[c], u.tile) << "block " << c << " for block " << b;
          ++consumed[c];
        }
      }
    for (int b = 0; b < blocks; ++b) EXPECT_EQ(consumed[b], handed_on[b] >= 0 ? 1 : 0) << b;
  }
}


// One block per SM up to the most a call runs; fewer tiles than that are all cut where a block per
// tile would leave half the SMs idle and each block still gets its least share of K tiles.
TEST(StreamKSplit, BlocksOnePerSmAndTilesFewerThanThemCutWhereHalfTheSmsWouldIdle) {
  using stream_k::persistent_blocks;
  EXPECT_EQ(persistent_blocks(512, 512, 132), 132);
  EXPECT_EQ(persistent_blocks(133, 1, 132), 132);
  EXPECT_EQ(persistent_blocks(132, 1024, 132), 132);
  EXPECT_EQ(persistent_blocks(4096, 8, 400), stream_k::kMaxBlocks);
  // 128 tiles (2048^2 of 128 x 256): a block per tile, uncut.
  EXPECT_EQ(persistent_blocks(128, 256, 132), 128);
  EXPECT_EQ(persistent_blocks(67, 1024, 132), 67);
  // 32 tiles of 1024 K tiles (128 x 8192 x 8192): cut over all 132.
  EXPECT_EQ(persistent_blocks(32, 1024, 132), 132);
  // 66 tiles: cut while each block gets the least share.
  const int least = stream_k::kMinShareBelowOneWave;
  EXPECT_EQ(persistent_blocks(66, 2 * least, 132), 132);
  EXPECT_EQ(persistent_blocks(66, 2 * least - 1, 132), 66);
  EXPECT_EQ(persistent_blocks(1, 0, 132), 1);
  EXPECT_EQ(persistent_blocks(0, 8, 132), 1);
  EXPECT_EQ(persistent_blocks(5, 8, 0), 1);
}
