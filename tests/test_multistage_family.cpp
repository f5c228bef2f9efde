// The multistage family without a GPU: its space, the rules its check shares with the template's
// static_asserts, and what can_run lets it serve and the launch it asks for. It has no pruning
// hint: where its tiles fill under a quarter of the SMs, the tuner's underfill rule leaves it out.
// The same for streamk, its kernels as persistent blocks with the last waves cut in K (the split
// itself: test_stream_k_split.cpp).
// Every variant compiling without spills: CompileEveryVariant (test_nvrtc_compile.cpp). On the
// H200: EveryVariant and EveryFamily (test_gpu_correctness.cpp).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {
namespace {

std::string refusal(const std::string& name) {
  try {
    parse_variant(name);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return {};
}

TEST(MultistageSpace, IsThreeBlockTilesTimesBkStagesAndCopyWidthLessTheTwoThatSpill) {
  std::set<std::string> tiles;
  int count = 0;
  for (const auto& v : variant_space("multistage")) {
    ++count;
    tiles.insert(std::to_string(v.param("bm")) + "x" + std::to_string(v.param("bn")));
    EXPECT_EQ(parse_variant(variant_name(v)), v);
    EXPECT_EQ(precision_of(v), Precision::highest);
  }
  EXPECT_EQ(tiles, (std::set<std::string>{"128x128", "128x256", "256x128"}));
  // Less the two 128 x 128 BK 16 tiles with 4-byte copies of B, which spill.
  EXPECT_EQ(count, 3 * 2 * 2 * 2 - 2);
  EXPECT_EQ(variant_name(parse_variant("multistage_bm128_bn256_bk8_st4_v4")),
            "multistage_bm128_bn256_bk8_st4_v4");
}

// Every reason the family's check gives is the message of a static_assert of the template, so
// that a variant the space holds never fails to compile for a reason the check does not know.
TEST(MultistageSpace, TheCheckRefusesWithTheTemplatesOwnMessages) {
  const std::string why = refusal("multistage_bm256_bn256_bk8_st4_v4");
  EXPECT_NE(why.find("BM * BN must be 2 or 4 warp tiles of 64 x 64"), std::string::npos) << why;
  const std::string spills = refusal("multistage_bm128_bn128_bk16_st4_v1");
  EXPECT_NE(spills.find("no BK 16 with 4-byte copies of B at 128 threads"), std::string::npos)
      << spills;
  const std::string_view source = detail::find_template("multistage.cu").source;
  for (const char* message :
       {"BM and BN are multiples of the 64 x 64 warp tile",
        "BM * BN must be 2 or 4 warp tiles of 64 x 64: 128 or 256 threads per block",
        "VEC is 1 (4-byte copies of B, any alignment) or 4 (16-byte)",
        "BK is a multiple of 8: A is copied in runs of 8 floats along K",
        "at least 2 stages: one multiplied while the next is copied",
        "the A tile (BM x BK) must split evenly into runs of 8 floats among the threads",
        "the B tile (BK x BN) must split into whole rows evenly among the threads",
        "no BK 16 with 4-byte copies of B at 128 threads: ptxas spills their registers"})
    EXPECT_NE(source.find(message), std::string_view::npos) << message;
  // Values outside the space are refused before the check.
  EXPECT_FALSE(refusal("multistage_bm128_bn256_bk32_st4_v4").empty());
  EXPECT_FALSE(refusal("multistage_bm128_bn256_bk8_st2_v4").empty());
}

TEST(MultistageCanRun, Float4CopiesNeedAlignmentFourScalarOnesRunAnywhere) {
  const DeviceInfo h200 = testing::synthetic_h200();
  const Variant v4 = parse_variant("multistage_bm128_bn256_bk8_st4_v4");
  const Variant v1 = parse_variant("multistage_bm128_bn256_bk8_st4_v1");
  EXPECT_TRUE(can_run(v4, h200, Problem::dense(4096, 4096, 4096, 4)).ok);
  EXPECT_FALSE(can_run(v4, h200, Problem::dense(4097, 4097, 4097, 1)).ok);
  EXPECT_TRUE(can_run(v1, h200, Problem::dense(4097, 4097, 4097, 1)).ok);
  // cp.async needs compute capability 8.0.
  DeviceInfo turing = h200;
  turing.cc_major = 7;
  turing.cc_minor = 5;
  const Verdict old = can_run(v1, turing, Problem::dense(4096, 4096, 4096, 1));
  EXPECT_FALSE(old.ok);
  EXPECT_NE(old.reason.find("needs compute capability"), std::string::npos) << old.reason;
}

TEST(MultistageCanRun, EveryVariantFitsAnH200AndLaunchesWithTheTemplatesGeometry) {
  const auto& f = detail::find_family("multistage");
  const Problem p = Problem::dense(4100, 3000, 4096, 4);
  for (const auto& v : variant_space("multistage")) {
    EXPECT_TRUE(can_run(v, testing::synthetic_h200(), p).ok) << variant_name(v);
    const int bm = v.param("bm"), bn = v.param("bn"), bk = v.param("bk"), st = v.param("st");
    // STAGES of As[BK][BM + 4] and Bs[BK][BN].
    EXPECT_EQ(f.shared_bytes(v), static_cast<std::size_t>(st * bk * (bm + 4 + bn)) * sizeof(float));
    const detail::LaunchGeometry g = f.geometry(v, p);
    EXPECT_EQ(g.dynamic_shared_bytes, f.shared_bytes(v));
    // A warp per 64 x 64 tile of C; a block per BM x BN tile, the edge tiles included.
    EXPECT_EQ(g.block[0], static_cast<unsigned>(bm / 64 * (bn / 64) * 32)) << variant_name(v);
    EXPECT_EQ(g.grid[0], static_cast<unsigned>((3000 + bn - 1) / bn));
    EXPECT_EQ(g.grid[1], static_cast<unsigned>((4100 + bm - 1) / bm));
  }
}

TEST(StreamkSpace, IsMultistagesWinningTileWithItsStagesAndCopyWidths) {
  std::set<std::string> names;
  for (const auto& v : variant_space("streamk")) {
    names.insert(variant_name(v));
    EXPECT_EQ(precision_of(v), Precision::highest);
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "streamk_bm128_bn256_bk8_st3_v1", "streamk_bm128_bn256_bk8_st3_v4",
                       "streamk_bm128_bn256_bk8_st4_v1", "streamk_bm128_bn256_bk8_st4_v4"}));
  // The check knows the rules of STREAM_K's own static_asserts, with their messages.
  const std::string_view source = detail::find_template("multistage.cu").source;
  const auto& f = detail::find_family("streamk");
  auto with = [](const std::string& name, const std::string& key, int value) {
    Variant v = parse_variant(name);
    for (auto& [k, x] : v.params)
      if (k == key) x = value;
    return v;
  };
  const std::string spills = f.check_params(with("streamk_bm128_bn256_bk8_st4_v1", "bk", 16));
  EXPECT_NE(spills.find("no BK 16 with 4-byte copies of B with STREAM_K"), std::string::npos);
  EXPECT_NE(source.find(spills), std::string_view::npos) << spills;
  const std::string threads = f.check_params(with("streamk_bm128_bn256_bk8_st4_v4", "bn", 128));
  EXPECT_NE(threads.find("STREAM_K blocks are 256 threads"), std::string::npos) << threads;
  EXPECT_NE(source.find(threads), std::string_view::npos) << threads;
}

TEST(StreamkCanRun, AWorkspaceOfATileAndAFlagPerBlockAndNoPlaceWhereEachBlockTakesOneTile) {
  const DeviceInfo h200 = testing::synthetic_h200();
  const auto& f = detail::find_family("streamk");
  const Variant v = parse_variant("streamk_bm128_bn256_bk8_st4_v4");
  // 4096^2: 512 tiles of 128 x 256, a block per SM.
  const Problem big = Problem::dense(4096, 4096, 4096, 4);
  EXPECT_TRUE(can_run(v, h200, big).ok);
  EXPECT_EQ(f.workspace_bytes(v, big, h200), 132u * (128 * 256 * 4 + 4));
  EXPECT_TRUE(f.pruning_hint(v, h200, big).empty());
  // 2048^2 is 128 tiles: a block per tile, nothing cut (more than half the SMs have a tile).
  const std::string why = f.pruning_hint(v, h200, Problem::dense(2048, 2048, 2048, 4));
  EXPECT_NE(why.find("128 tiles go one to a block"), std::string::npos) << why;
  // 17 x 9 = 153 tiles: the last cut, and the tuner times it.
  EXPECT_TRUE(f.pruning_hint(v, h200, Problem::dense(2049, 2049, 40, 4)).empty());
  // 128 x 8192 x 8192 is 32 tiles of 1024 K tiles: all cut over the 132 SMs, timed.
  const Problem wide = Problem::dense(128, 8192, 8192, 4);
  EXPECT_TRUE(f.pruning_hint(v, h200, wide).empty());
  EXPECT_EQ(f.workspace_bytes(v, wide, h200), 132u * (128 * 256 * 4 + 4));
  // 32 tiles of 4 K tiles: too little K to cut, a block per tile.
  EXPECT_NE(f.pruning_hint(v, h200, Problem::dense(128, 8192, 32, 4)).find("32 tiles"),
            std::string::npos);
  // The kernel numbers tiles with 32 bits.
  const std::string huge = f.check_problem(v, Problem::dense(2147483647, 2147483647, 1, 4));
  EXPECT_NE(huge.find("32 bits"), std::string::npos) << huge;
  EXPECT_TRUE(f.check_problem(v, big).empty());
}

}  // namespace
}  // namespace tilemm
