// The stream-K work split (kernel_templates/stream_k.cuh), without a GPU: the maps themselves, on
// the host, as the kernels of tf32wgmma and streamk call them; the workspace and the limits the
// host side gives them (core/stream_k_split.cpp); and that the embedded templates carry the header
// pasted in, so that their hash covers it. On the H200: StreamK.* (test_gpu_correctness.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_sources.hpp"
#include "stream_k_split.hpp"

namespace tilemm {
namespace {

TEST(StreamKSplit, TheWorkspaceHoldsATileAndAFlagPerBlockUpToTheMostBlocks) {
  constexpr std::size_t kTile = 128 * 256;
  // Tiles of 128 x 256, edge tiles included.
  EXPECT_EQ(detail::stream_k_tiles(Problem::dense(1, 1, 1, 1), 128, 256), 1);
  EXPECT_EQ(detail::stream_k_tiles(Problem::dense(1281, 2560, 8, 1), 128, 256), 11 * 10);
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(128, 256, 8, 4), 128, 256),
            kTile * 4 + 4);
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(1281, 2560, 8, 1), 128, 256),
            110 * (kTile * 4 + 4));
  EXPECT_EQ(detail::stream_k_workspace_bytes(Problem::dense(8192, 8192, 8, 4), 128, 256),
            static_cast<std::size_t>(detail::kMaxStreamKBlocks) * (kTile * 4 + 4));
  // 2^31 tiles of 1 x 1 do not fit the kernels' 32-bit tile numbers; one fewer does.
  EXPECT_NE(detail::stream_k_tiles_fit(Problem::dense(65536, 32768, 1, 1), 1, 1).find("32 bits"),
            std::string::npos);
  EXPECT_TRUE(detail::stream_k_tiles_fit(Problem::dense(2147483647, 1, 1, 1), 1, 1).empty());
}

// cmake/embed_templates.cmake pastes the header into each template that includes it: NVRTC gets
// no #include to resolve, and a change to the header changes the templates' hashes.
TEST(StreamKSplit, TheTemplatesThatUseItCarryItPastedIn) {
  for (const char* file : {"multistage.cu", "tf32wgmma.cu"}) {
    const std::string_view source = detail::find_template(file).source;
    EXPECT_EQ(source.find("#include \"stream_k.cuh\""), std::string_view::npos) << file;
    EXPECT_NE(source.find("namespace stream_k {"), std::string_view::npos) << file;
    EXPECT_NE(source.find("TILEMM_INDEX_MAP int first_block_of_tile("), std::string_view::npos)
        << file;
  }
}

}  // namespace
}  // namespace tilemm

// The stream-K work split (STREAM_K 1), on the host: every K tile of every tile is done by one
// block; a tile cut between blocks is finished by the block with its last K tiles, after exactly
// the blocks before it that hold its other K tiles, each of which leaves it unfinished as its first
// unit past the whole tiles, before any unit it waits in (so no block waits for a waiting block);
// the shares differ by at most one K tile.
TEST(StreamKSplit, EveryKTileOnceAndEveryCutTileFinishedByItsLastBlockAfterTheOthers) {
  using namespace stream_k;
  std::mt19937 rng(20261201);
  std::vector<std::tuple<long long, int, int>> cases;  // tiles, blocks, K tiles
  for (long long tiles : {1LL, 2LL, 131LL, 132LL, 133LL, 263LL, 264LL, 265LL, 1024LL, 4096LL})
    for (int blocks : {1, 7, 132})
      for (int k_tiles : {0, 1, 2, 3, 128}) cases.emplace_back(tiles, blocks, k_tiles);
  for (int i = 0; i < 200; ++i)
    cases.emplace_back(std::uniform_int_distribution<long long>(1, 3000)(rng),
                       std::uniform_int_distribution<int>(1, 256)(rng),
                       std::uniform_int_distribution<int>(1, 300)(rng));
  for (const auto& [tiles, asked_blocks, k_tiles] : cases) {
    const int blocks = static_cast<int>(std::min<long long>(tiles, asked_blocks));
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

