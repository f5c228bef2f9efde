// The tf32wgmma family without a GPU: its space, which devices and problems can_run lets it serve
// (compute capability 9.0 alone, alignment class 4), that NVRTC compiles it for sm_90a while the
// CUBIN stays filed under the device's sm_90, and the template's own index maps (every placement
// of an element in shared memory or registers) against the PTX ISA's layouts. Every variant
// compiling without spills or serialized wgmmas: TensorCores/CompileFamily in
// test_nvrtc_compile.cpp. On the H200: EveryVariant (test_gpu_correctness), PrecisionGpu,
// DifferentialPrecision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/variant.hpp"

// The template's index maps alone (they depend on no macro and compile on the host): the very
// functions the kernel calls.
#define TILEMM_TF32WGMMA_INDEX_MAPS_ONLY
#include "../kernel_templates/tf32wgmma.cu"

namespace tilemm {
namespace {

const Variant kHigh = parse_variant("tf32wgmma_bm128_bn128_bk32_st4_sp3_sk0_gm1");
const Variant kMedium = parse_variant("tf32wgmma_bm256_bn128_bk32_st4_sp1_sk0_gm1");

Problem at(Problem p, Precision precision) {
  p.precision = precision;
  return p;
}

DeviceInfo device_with(int major, int minor) {
  DeviceInfo d = testing::synthetic_h200();
  d.cc_major = major;
  d.cc_minor = minor;
  return d;
}

TEST(Tf32wgmmaSpace, HoldsBothPrecisionsAndEveryNameParsesBack) {
  const auto space = variant_space("tf32wgmma");
  std::set<Precision> precisions;
  for (const auto& v : space) {
    EXPECT_EQ(parse_variant(variant_name(v)), v);
    EXPECT_EQ(precision_of(v), v.param("sp") == 3 ? Precision::high : Precision::medium);
    precisions.insert(precision_of(v));
    // 3xTF32's partial sums do not fit beside wgmma N = BM = 256's accumulators.
    if (v.param("sp") == 3) {
      EXPECT_LE(v.param("bm"), 128) << variant_name(v);
    }
  }
  EXPECT_EQ(precisions, (std::set<Precision>{Precision::high, Precision::medium}));
  EXPECT_EQ(precision_of(kHigh), Precision::high);
  EXPECT_EQ(precision_of(kMedium), Precision::medium);
  EXPECT_THROW(parse_variant("tf32wgmma_bm256_bn128_bk32_st4_sp3_sk0_gm1"), InvalidArgument);
  EXPECT_THROW(parse_variant("tf32wgmma_bm128_bn64_bk32_st3_sp1_sk0_gm1"), InvalidArgument);  // stages
  EXPECT_THROW(parse_variant("tf32wgmma_bm256_bn64_bk32_st4_sp1_sk0_gm1"), InvalidArgument);
  EXPECT_THROW(parse_variant("tf32wgmma_bm128_bn256_bk32_st4_sp1_sk0_gm1"), InvalidArgument);  // 4 groups
  EXPECT_THROW(parse_variant("tf32wgmma_bm128_bn128_bk16_st4_sp1_sk0_gm1"), InvalidArgument);  // BK
}

TEST(Tf32wgmmaCanRun, RunsOnComputeCapability90AloneNotOnOlderOrNewerDevices) {
  const Problem p = at(Problem::dense(1024, 1024, 1024, 4), Precision::high);
  EXPECT_TRUE(can_run(kHigh, testing::synthetic_h200(), p).ok);
  for (const auto& [major, minor] : {std::pair{8, 0}, std::pair{8, 9}, std::pair{10, 0}}) {
    const Verdict v = can_run(kHigh, device_with(major, minor), p);
    EXPECT_FALSE(v.ok) << major << "." << minor;
    EXPECT_NE(v.reason.find("needs compute capability"), std::string::npos) << v.reason;
  }
  EXPECT_NE(can_run(kHigh, device_with(10, 0), p).reason.find("exactly 9.0"), std::string::npos);
  EXPECT_TRUE(detail::variant_builds_for(kHigh, "sm_90"));
  EXPECT_FALSE(detail::variant_builds_for(kHigh, "sm_80"));
  EXPECT_FALSE(detail::variant_builds_for(kHigh, "sm_100"));
  // Other families are not arch-specific: a newer device still builds them.
  EXPECT_TRUE(detail::variant_builds_for(parse_variant("tf32mma_bm128_bn128_bk16_wm64_wn32_st4_sp3_v4"),
                                         "sm_100"));
}

TEST(Tf32wgmmaCanRun, NeedsAlignmentFourAndServesOnlyItsPrecisionOrLess) {
  const DeviceInfo h200 = testing::synthetic_h200();
  EXPECT_FALSE(can_run(kHigh, h200, at(Problem::dense(1001, 999, 997, 1), Precision::high)).ok);
  EXPECT_FALSE(can_run(kHigh, h200, at(Problem::dense(1000, 1000, 1000, 2), Precision::high)).ok);
  EXPECT_TRUE(can_run(kHigh, h200, at(Problem::dense(1000, 1000, 1000, 4), Precision::high)).ok);
  EXPECT_TRUE(can_run(kHigh, h200, at(Problem::dense(1000, 1000, 1000, 4), Precision::medium)).ok);
  EXPECT_FALSE(can_run(kHigh, h200, Problem::dense(1000, 1000, 1000, 4)).ok);  // highest
  EXPECT_FALSE(can_run(kMedium, h200, at(Problem::dense(1000, 1000, 1000, 4), Precision::high)).ok);
}

TEST(Tf32wgmmaCanRun, EveryVariantFitsAnH200AndLaunchesWithTheTemplatesSharedMemory) {
  const auto& f = detail::find_family("tf32wgmma");
  const Problem p = at(Problem::square(4096), Precision::medium);
  for (const auto& v : variant_space("tf32wgmma")) {
    EXPECT_TRUE(can_run(v, testing::synthetic_h200(), p).ok) << variant_name(v);
    // The template's stages (A tile BM x BK floats, with SPLIT 3 its small plane as large, B tile
    // BK x (BN + 8) floats, two 8-byte mbarriers, with SPLIT 3 three), and 1 KiB for aligning the
    // tiles to 1024 bytes.
    const int bm = v.param("bm"), bn = v.param("bn"), bk = v.param("bk"), st = v.param("st");
    const bool split3 = v.param("sp") == 3;
    const auto stage_bytes =
        static_cast<std::size_t>((split3 ? 2 : 1) * bm * bk + bk * (bn + 8)) * sizeof(float) +
        (split3 ? 24 : 16);
    EXPECT_EQ(f.shared_bytes(v), st * stage_bytes + 1024) << variant_name(v);
    EXPECT_EQ(f.geometry(v, p).dynamic_shared_bytes, f.shared_bytes(v));
    // One consumer warpgroup of 128 threads per 64 columns of C, and the producer warpgroup.
    EXPECT_EQ(f.geometry(v, p).block[0], static_cast<unsigned>((bn / 64 + 1) * 128))
        << variant_name(v);
  }
}

// With a driver present NVRTC may serve a compile from its cache and skip ptxas' report.
const int compute_cache_off = setenv("CUDA_CACHE_DISABLE", "1", 1);

TEST(Tf32wgmmaCompile, CompilesForSm90aAndIsFiledUnderTheDevicesSm90) {
  EXPECT_EQ(detail::nvrtc_architecture(kHigh, "sm_90"), "sm_90a");
  EXPECT_EQ(detail::nvrtc_architecture(parse_variant("naive"), "sm_90"), "sm_90");
  const detail::CompiledVariant c = detail::compile_variant(kMedium, "sm_90");
  EXPECT_EQ(c.arch, "sm_90");  // the key of the cache and of compile_variant_once
  EXPECT_FALSE(c.cubin.empty());
  EXPECT_EQ(c.spill_store_bytes, 0) << c.log;
  // The same template for plain sm_90 does not compile: wgmma needs the sm_90a target, which only
  // the family's arch_specific flag supplies.
  EXPECT_THROW(detail::compile_template(detail::template_of(kMedium), variant_name(kMedium), "sm_90",
                                        detail::compile_definitions(kMedium)),
               CompileError);
}

TEST(Tf32wgmmaRegistry, AnArchSpecificFamilyNeedsItsComputeCapability) {
  detail::Family f = detail::find_family("tf32wgmma");
  f.name = "archless";
  f.min_compute_capability = 0;
  const detail::EmbeddedTemplate& source = detail::find_template("tf32wgmma.cu");
  EXPECT_THROW(detail::register_extra_family(f, source), Error);
}

// ---- The template's index maps (kernel_templates/tf32wgmma.cu, namespace tf32wgmma_maps) ----
namespace maps = ::tf32wgmma_maps;

// The register fragment of wgmma's A operand (.tf32, m64nNk8) is the PTX ISA's figure, which
// CUTLASS encodes as ALayout_64x8: thread (t0, t1, t2) = (lane % 4, lane / 4, warp) with strides
// (64, 1, 16) and values (v % 2, v / 2) with strides (8, 256) into the column-major 64 x 8
// (row + 64 k). Both encodings must agree, and the fragment must cover the 64 x 8 once.
TEST(Tf32wgmmaIndexMaps, RegisterFragmentIsThePtxLayoutAndCoversTheOperandOnce) {
  std::set<std::pair<int, int>> seen;
  for (int warp = 0; warp < 4; ++warp)
    for (int lane = 0; lane < 32; ++lane)
      for (int v = 0; v < 4; ++v) {
        const int row = maps::fragment_row(warp, lane, v), k = maps::fragment_k(lane, v);
        const int cutlass = 64 * (lane % 4) + (lane / 4) + 16 * warp + 8 * (v % 2) + 256 * (v / 2);
        EXPECT_EQ(row + 64 * k, cutlass) << warp << " " << lane << " " << v;
        seen.insert({row, k});
      }
  EXPECT_EQ(seen.size(), 64u * 8u);
}

// The accumulators of m64nNk8 .f32: CUTLASS's CLayout_64xN, thread strides (128, 1, 16), values
// (i % 2, (i / 2) % 2, i / 4) with strides (64, 8, 512) into row + 64 column.
TEST(Tf32wgmmaIndexMaps, AccumulatorsAreThePtxLayoutAndCoverDOnce) {
  for (const int n : {64, 128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int warp = 0; warp < 4; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < n / 2; ++i) {
          const int row = maps::accumulator_row(warp, lane, i);
          const int column = maps::accumulator_column(lane, i);
          const int cutlass = 128 * (lane % 4) + (lane / 4) + 16 * warp + 64 * (i % 2) +
                              8 * ((i / 2) % 2) + 512 * (i / 4);
          EXPECT_EQ(row + 64 * column, cutlass) << n << " " << warp << " " << lane << " " << i;
          seen.insert({row, column});
        }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(64 * n)) << n;
  }
}

// The row <-> column-of-C permutation the fragments and the epilogue share: a bijection on the
// warpgroup's 64 that keeps each warp within its own 16 columns and puts the rows g and g + 8 a
// thread holds on adjacent columns (its 8-byte loads and stores).
TEST(Tf32wgmmaIndexMaps, RowsMapOntoTheWarpgroupsColumnsWithEachThreadsPairAdjacent) {
  std::set<int> columns;
  for (int row = 0; row < 64; ++row) {
    const int c = maps::c_column_of_row(row);
    EXPECT_EQ(c / 16, row / 16) << row;
    columns.insert(c);
  }
  EXPECT_EQ(columns.size(), 64u);
  EXPECT_EQ(*columns.begin(), 0);
  EXPECT_EQ(*columns.rbegin(), 63);
  for (int warp = 0; warp < 4; ++warp)
    for (int lane = 0; lane < 32; ++lane) {
      const int c = maps::c_column_of_row(maps::fragment_row(warp, lane, 0));
      EXPECT_EQ(c % 2, 0);
      EXPECT_EQ(maps::c_column_of_row(maps::fragment_row(warp, lane, 1)), c + 1);
      EXPECT_EQ(maps::c_column_of_row(maps::fragment_row(warp, lane, 3)), c + 1);
      EXPECT_EQ(maps::fragment_k(lane, 2), maps::fragment_k(lane, 0) + 4);
    }
}

// What the epilogue stores: each warpgroup's acc[i] and acc[i + 2] (i % 4 < 2) at (m, n) and
// (m, n + 1); over the warpgroup, every element of its BM x 64 of C exactly once.
TEST(Tf32wgmmaIndexMaps, TheEpilogueWritesEachElementOfTheWarpgroupsTileOnce) {
  for (const int bm : {64, 128, 256}) {
    std::set<std::pair<int, int>> written;
    for (int warp = 0; warp < 4; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < bm / 8; ++j)
          for (int h = 0; h < 2; ++h) {
            const int i = 4 * j + h;
            const int m = maps::accumulator_column(lane, i);
            const int n = maps::c_column_of_row(maps::accumulator_row(warp, lane, i));
            EXPECT_EQ(maps::accumulator_column(lane, i + 2), m);
            EXPECT_EQ(maps::c_column_of_row(maps::accumulator_row(warp, lane, i + 2)), n + 1);
            EXPECT_TRUE(written.insert({m, n}).second);
            EXPECT_TRUE(written.insert({m, n + 1}).second);
          }
    EXPECT_EQ(written.size(), static_cast<std::size_t>(bm * 64)) << bm;
  }
}

// The A tile's placement under the 128-byte swizzle: a bijection of (row, 16-byte chunk) onto the
// tile's chunks, and what the tensor core reads for k8 step s through the descriptor (start + 32
// s, rows 128 bytes apart, eight-row groups 1024 apart, bits 4-6 XOR bits 7-9) is A[row][8 s + k].
TEST(Tf32wgmmaIndexMaps, TheSwizzledATileIsWhatTheDescriptorReads) {
  for (const int bm : {64, 128, 256}) {
    std::set<int> chunks;
    for (int m = 0; m < bm; ++m)
      for (int c = 0; c < 8; ++c) {
        const int at = maps::a_chunk_offset(m, c);
        EXPECT_EQ(at % 16, 0);
        EXPECT_GE(at, 0);
        EXPECT_LT(at, bm * 128);
        chunks.insert(at);
      }
    EXPECT_EQ(chunks.size(), static_cast<std::size_t>(bm * 8)) << bm;
    for (int s = 0; s < 4; ++s)
      for (int row = 0; row < bm; ++row)
        for (int k = 0; k < 8; ++k) {
          const int unswizzled = (row / 8) * 1024 + (row % 8) * 128 + 32 * s + 4 * k;
          const int kk = 8 * s + k;  // the float of A's row the wgmma multiplies
          EXPECT_EQ(maps::swizzle_128b(unswizzled),
                    maps::a_chunk_offset(row, kk / 4) + 4 * (kk % 4))
              << bm << " " << s << " " << row << " " << k;
        }
  }
}

// Shared-memory banks: a 64-bit load is served per half-warp and a 128-bit store per quarter-warp;
// within one, no two lanes may touch the same bank in different words (4-byte banks, 32 of them).
bool conflict_free(const std::vector<int>& byte_addresses, int bytes_each) {
  std::set<int> banks;
  for (const int a : byte_addresses)
    for (int w = 0; w < bytes_each / 4; ++w)
      if (!banks.insert((a / 4 + w) % 32).second) return false;
  return true;
}

TEST(Tf32wgmmaIndexMaps, FragmentLoadsAndTileCopiesAreFreeOfBankConflicts) {
  for (const int bn : {64, 128})
    for (int group = 0; group < bn / 64; ++group)
      for (int warp = 0; warp < 4; ++warp)
        for (int s = 0; s < 4; ++s)
          for (const int v : {0, 2})
            for (int half = 0; half < 2; ++half) {
              std::vector<int> addresses;
              for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
                const int n = 64 * group + maps::c_column_of_row(maps::fragment_row(warp, lane, 0));
                const int k = 8 * s + maps::fragment_k(lane, v);
                addresses.push_back(4 * maps::b_tile_index(k, n, bn));
              }
              EXPECT_TRUE(conflict_free(addresses, 8)) << bn << " " << warp << " " << s << " " << v;
            }
  // One row of the swizzled A tile: its eight 16-byte chunks cover the 32 banks once. (This was
  // the producer's A copies, a quarter-warp per row; since A comes by TMA no thread copies A, and
  // the check stays for the layout alone.)
  for (int first = 0; first < 256 * 8; first += 8) {
    std::vector<int> addresses;
    for (int id = first; id < first + 8; ++id)
      addresses.push_back(maps::a_chunk_offset(id / 8, id % 8));
    EXPECT_TRUE(conflict_free(addresses, 16)) << first;
  }
}

// Each tile shape four ways: one block per tile (sk 0), persistent blocks in launch order
// (sk 1, gm 1) and in groups of 4 or 8 rows of tiles (sk 1, gm 4 and gm 8); the grouped order
// never without sk 1.
TEST(Tf32wgmmaSpace, SixHighAndEightMediumTileShapesEachInFourSchedules) {
  int high = 0, medium = 0;
  for (const auto& v : variant_space("tf32wgmma")) {
    (precision_of(v) == Precision::high ? high : medium)++;
    if (v.param("gm") != 1) {
      EXPECT_EQ(v.param("sk"), 1) << variant_name(v);
    }
  }
  EXPECT_EQ(high, 4 * 6);
  EXPECT_EQ(medium, 4 * 8);
}

}  // namespace
}  // namespace tilemm

// The grouped tile order (gm 4 and gm 8): every tile of C once, and within a full group the blocks
// numbered together cover the group's rows of tiles before the next column.
TEST(Tf32wgmmaGroupedOrder, EveryTileOnceAndFullGroupsGoColumnByColumn) {
  using namespace tf32wgmma_maps;
  std::mt19937 rng(20261202);
  std::vector<std::pair<int, int>> grids{{1, 1}, {8, 1}, {1, 8}, {7, 5}, {8, 64}, {12, 24}, {17, 3}};
  for (int i = 0; i < 100; ++i)
    grids.emplace_back(std::uniform_int_distribution<int>(1, 70)(rng),
                       std::uniform_int_distribution<int>(1, 70)(rng));
  for (const int rows : {4, 8})
    for (const auto& [tiles_m, tiles_n] : grids) {
      SCOPED_TRACE(std::to_string(tiles_m) + " x " + std::to_string(tiles_n) +
                   " tiles, groups of " + std::to_string(rows));
      std::vector<int> seen(static_cast<std::size_t>(tiles_m * tiles_n), 0);
      for (int tile = 0; tile < tiles_m * tiles_n; ++tile) {
        const TilePosition p = grouped_tile(tile, tiles_m, tiles_n, rows);
        ASSERT_GE(p.row, 0);
        ASSERT_LT(p.row, tiles_m);
        ASSERT_GE(p.col, 0);
        ASSERT_LT(p.col, tiles_n);
        ++seen[static_cast<std::size_t>(p.row * tiles_n + p.col)];
        if (tile < tiles_m / rows * rows * tiles_n) {
          EXPECT_EQ(p.row, tile / (rows * tiles_n) * rows + tile % rows) << tile;
          EXPECT_EQ(p.col, tile % (rows * tiles_n) / rows) << tile;
        }
      }
      for (int n : seen) ASSERT_EQ(n, 1);
    }
}
