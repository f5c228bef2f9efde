#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {
namespace {

using testing::synthetic_h200;
using testing::synthetic_h200_as;

// can_run refused the variant, naming `why` in its reason.
::testing::AssertionResult refused_because(const Verdict& verdict, const std::string& why) {
  if (verdict.ok) return ::testing::AssertionFailure() << "accepted; expected a refusal naming '" << why << "'";
  if (verdict.reason.find(why) == std::string::npos)
    return ::testing::AssertionFailure() << "refused with '" << verdict.reason << "'; expected '" << why << "'";
  return ::testing::AssertionSuccess();
}

// Every variant of a family without a shape rule; the skinny families (gemvn, gemvm), which
// serve only N or M <= 16, are checked on their own shapes below.
TEST(CanRun, EveryVariantRunsAnOrdinaryProblemOnTheH200) {
  const auto device = synthetic_h200();
  int checked = 0;
  for (const auto& v : variant_space()) {
    if (detail::find_family(v.family).check_problem != detail::any_problem) continue;
    // At the precision the variant computes at (the tensor-core family's: high or medium).
    Problem problem = Problem::dense(1000, 1000, 1000, 4);
    problem.precision = precision_of(v);
    const Verdict verdict = can_run(v, device, problem);
    EXPECT_TRUE(verdict.ok) << variant_name(v) << ": " << verdict.reason;
    EXPECT_TRUE(verdict.reason.empty());
    ++checked;
  }
  EXPECT_GT(checked, 200);
}

// The smallest of 1, 2, 4, 8, 16 that is >= extent: the size of skinny variant that serves it.
int skinny_size_for(std::int64_t extent) {
  int size = 1;
  while (size < extent) size *= 2;
  return size;
}

// The variants of one size of a skinny family: per-lane widths 1, 2 and 4 where width x size
// <= 4 (the accumulators' register budget), width 4 alone at sizes 8 and 16 (the wide shape),
// times 4 splits.
std::size_t skinny_variants_of_size(int size) {
  std::size_t widths = 0;
  for (int width : {1, 2, 4})
    if (size >= 8 ? width == 4 : width == 1 || width * size <= 4) ++widths;
  return widths * 4;
}

// Each M <= 16 (gemvm) or N <= 16 (gemvn) is served by exactly one size of variant, the smallest
// that holds it, with every geometry and split of that size; larger extents by none, and the
// refusal says why.
TEST(CanRun, SkinnyFamiliesServeTheirExtentWithOneVariantSize) {
  const auto device = synthetic_h200();
  for (const char* family : {"gemvm", "gemvn"}) {
    const bool over_m = std::string(family) == "gemvm";
    const std::string size_key = over_m ? "m" : "n";
    for (std::int64_t extent = 1; extent <= 17; ++extent) {
      const Problem p = over_m ? Problem::dense(extent, 4096, 4096, 4) : Problem::dense(4096, extent, 4096, 4);
      std::size_t accepted = 0;
      for (const auto& v : variant_space(family)) {
        const Verdict verdict = can_run(v, device, p);
        const int size = v.param(size_key);
        if (extent <= 16 && size == skinny_size_for(extent)) {
          EXPECT_TRUE(verdict.ok) << variant_name(v) << " at " << extent << ": " << verdict.reason;
          ++accepted;
        } else if (size < extent) {
          EXPECT_TRUE(refused_because(verdict, std::string(family) + " serves " +
                                                   (over_m ? "M" : "N") + " <= " +
                                                   std::to_string(size)))
              << variant_name(v) << " at " << extent;
        } else {
          EXPECT_TRUE(refused_because(verdict, "serves it with less arithmetic"))
              << variant_name(v) << " at " << extent;
        }
      }
      EXPECT_EQ(accepted, extent <= 16 ? skinny_variants_of_size(skinny_size_for(extent)) : 0)
          << family << " at " << extent;
    }
  }
}

// Neither skinny family is ever a candidate for an ordinary shape, so tuning them costs nothing
// there; both may serve a problem small in both M and N.
TEST(CanRun, SkinnyFamiliesAreNoCandidatesForOrdinaryShapes) {
  const auto device = synthetic_h200();
  for (const char* family : {"gemvm", "gemvn"})
    for (const auto& v : variant_space(family)) {
      for (const Problem& p : {Problem::dense(1000, 1000, 1000, 4), Problem::dense(17, 17, 4096, 4),
                               Problem::dense(4096, 4096, 1, 1)})
        EXPECT_FALSE(can_run(v, device, p).ok) << variant_name(v) << " at " << p.M << "x" << p.N;
    }
  EXPECT_TRUE(can_run(parse_variant("gemvm_m16_c4_s4"), device, Problem::dense(9, 12, 100000, 4)).ok);
  EXPECT_TRUE(can_run(parse_variant("gemvn_n16_r4_s4"), device, Problem::dense(9, 12, 100000, 4)).ok);
}

// The kernels pick their load widths from the actual pointers at run time, so no alignment
// class keeps a skinny variant off a problem: a dense N = 1 problem (ldb = ldc = 1, class 1)
// runs every gemvn variant of size 1, an odd lda every gemvm variant of size 1.
TEST(CanRun, SkinnyVariantsRunEveryAlignmentClass) {
  const auto device = synthetic_h200();
  const Problem column = Problem::dense(4096, 1, 4096, 4);
  const Problem odd_row = Problem::dense(1, 4097, 4099, 4);
  ASSERT_EQ(column.alignment, 1);
  ASSERT_EQ(odd_row.alignment, 1);
  for (const auto& [family, p] : {std::pair{"gemvn", column}, std::pair{"gemvm", odd_row}}) {
    std::size_t accepted = 0;
    for (const auto& v : variant_space(family)) {
      const Verdict verdict = can_run(v, device, p);
      if (v.params.front().second != 1) continue;  // the size: n (gemvn) or m (gemvm)
      EXPECT_TRUE(verdict.ok) << variant_name(v) << ": " << verdict.reason;
      accepted += verdict.ok ? 1 : 0;
    }
    EXPECT_EQ(accepted, skinny_variants_of_size(1)) << family;
  }
}

// A skinny split sums its slices inside a thread block cluster: no workspace at any size (the
// old split gemvn kept S partial products and was refused past 1 GiB), no reduce kernel, and
// the split variants need thread block clusters (compute capability 9.0); the unsplit ones run
// on older GPUs too.
TEST(CanRun, SkinnySplitsUseClustersNotWorkspaces) {
  const auto h200 = synthetic_h200();
  auto a100 = synthetic_h200();
  a100.cc_major = 8;
  constexpr std::int64_t kLarge = std::int64_t{1} << 23;
  for (const char* family : {"gemvm", "gemvn"}) {
    const detail::Family& f = detail::find_family(family);
    for (const auto& v : variant_space(family)) {
      // 2^23 rows (gemvn) or columns (gemvm) of the size the variant serves, K = 64.
      const int size = v.params.front().second;
      const Problem p = family == std::string("gemvn") ? Problem::dense(kLarge, size, 64, 4)
                                                       : Problem::dense(size, kLarge, 64, 4);
      EXPECT_EQ(f.workspace_bytes(v, p, h200), 0u) << variant_name(v);
      EXPECT_TRUE(f.extra_kernels(v).empty()) << variant_name(v);
      EXPECT_TRUE(can_run(v, h200, p).ok) << variant_name(v) << ": " << can_run(v, h200, p).reason;
      const Verdict old_gpu = can_run(v, a100, p);
      if (v.param("s") > 1) {
        EXPECT_TRUE(refused_because(old_gpu, "needs compute capability 9.0")) << variant_name(v);
        EXPECT_FALSE(detail::variant_builds_for(v, "sm_80")) << variant_name(v);
      } else {
        EXPECT_TRUE(old_gpu.ok) << variant_name(v) << ": " << old_gpu.reason;
        EXPECT_TRUE(detail::variant_builds_for(v, "sm_80")) << variant_name(v);
      }
      EXPECT_TRUE(detail::variant_builds_for(v, "sm_90")) << variant_name(v);
    }
  }
}

// About 30 variants per family at most: each is compiled and timed on the shapes it serves.
TEST(CanRun, SkinnySpacesStaySmall) {
  for (const char* family : {"gemvm", "gemvn", "gemvmring", "gemvnring"}) {
    const auto space = variant_space(family);
    EXPECT_GE(space.size(), 20u) << family;
    EXPECT_LE(space.size(), 32u) << family;
  }
}

// gemvmring serves gemvm's wide extents (M 5 to 16) on every alignment class (its load widths
// are chosen at run time), N in blocks of 32 x c columns; its ring is dynamic shared memory on top
// of gemvm's arrays (d groups of 4 rows x 256 threads x c floats); cp.async needs compute
// capability 8.0 and its splits 9.0; and its check refuses with the template's own reasons.
TEST(CanRun, GemvmRingServesTheWideExtentsWithItsRingInSharedMemory) {
  const auto h200 = synthetic_h200();
  const auto a100 = synthetic_h200_as(8, 0);
  const auto turing = synthetic_h200_as(7, 5);
  const detail::Family& ring = detail::find_family("gemvmring");
  const detail::Family& plain = detail::find_family("gemvm");
  for (const auto& v : variant_space("gemvmring")) {
    const int m = v.param("m"), c = v.param("c"), s = v.param("s"), d = v.param("d");
    for (std::int64_t M = 1; M <= 17; ++M) {
      const Problem p = Problem::dense(M, 4097, 4099, 4);  // odd leading dimensions: class 1
      EXPECT_EQ(can_run(v, h200, p).ok, M <= m && M > m / 2) << variant_name(v) << " at M " << M;
    }
    const Problem p = Problem::dense(m, 1000, 512, 4);
    const detail::LaunchGeometry g = ring.geometry(v, p);
    EXPECT_EQ(g.grid[0], static_cast<unsigned>((1000 + 32 * c - 1) / (32 * c))) << variant_name(v);
    EXPECT_EQ(g.grid[2], static_cast<unsigned>(s));
    EXPECT_EQ(g.dynamic_shared_bytes, ring.shared_bytes(v));
    EXPECT_LE(ring.shared_bytes(v), 227u * 1024u);
    if (c == 4) {
      const Variant twin =
          parse_variant("gemvm_m" + std::to_string(m) + "_c4_s" + std::to_string(s));
      EXPECT_EQ(ring.shared_bytes(v) - plain.shared_bytes(twin),
                static_cast<std::size_t>(d) * 4 * 256 * 4 * sizeof(float))
          << variant_name(v);
    }
    EXPECT_TRUE(refused_because(can_run(v, turing, p), "needs compute capability"))
        << variant_name(v);
    EXPECT_EQ(can_run(v, a100, p).ok, s == 1) << variant_name(v);
  }
  const std::string_view source = detail::find_template("gemvm.cu").source;
  EXPECT_NE(source.find("B_RING (groups of B in flight per warp) is 2 to 8, for the wide shape "
                        "(MAX_M >= 8) only"),
            std::string_view::npos);
  EXPECT_THROW(parse_variant("gemvmring_m4_c1_s1_d4"), InvalidArgument);  // not a wide extent
  EXPECT_THROW(parse_variant("gemvmring_m16_c4_s1_d8"), InvalidArgument);  // not in the space
}

// gemvnring serves gemvn's wide extents (N 5 to 16) on every alignment class, M in blocks of 32
// rows; all its shared memory is dynamic: the block's sums and stage of B as gemvn's (less the
// one float gemvn keeps for block sums it does not use) plus the rings, 8 warps x d steps x 4 rows
// x 32 floats; cp.async needs compute capability 8.0, its splits and its three blocks per SM 9.0;
// and its check refuses with the template's own reasons.
TEST(CanRun, GemvnRingServesTheWideExtentsWithItsRingInSharedMemory) {
  const auto h200 = synthetic_h200();
  const auto a100 = synthetic_h200_as(8, 0);
  const auto turing = synthetic_h200_as(7, 5);
  const detail::Family& ring = detail::find_family("gemvnring");
  const detail::Family& plain = detail::find_family("gemvn");
  for (const auto& v : variant_space("gemvnring")) {
    const int n = v.param("n"), s = v.param("s"), d = v.param("d"), mb = v.param("mb");
    for (std::int64_t N = 1; N <= 17; ++N) {
      const Problem p = Problem::dense(4097, N, 4099, 4);  // odd leading dimensions: class 1
      EXPECT_EQ(can_run(v, h200, p).ok, N <= n && N > n / 2) << variant_name(v) << " at N " << N;
    }
    const Problem p = Problem::dense(1000, n, 512, 4);
    const detail::LaunchGeometry g = ring.geometry(v, p);
    EXPECT_EQ(g.grid[0], static_cast<unsigned>((1000 + 31) / 32)) << variant_name(v);
    EXPECT_EQ(g.grid[2], static_cast<unsigned>(s));
    EXPECT_EQ(g.dynamic_shared_bytes, ring.shared_bytes(v));
    EXPECT_LE(ring.shared_bytes(v), 227u * 1024u);
    const Variant twin = parse_variant("gemvn_n" + std::to_string(n) + "_r4_s" + std::to_string(s));
    EXPECT_EQ(ring.shared_bytes(v) + sizeof(float) - plain.shared_bytes(twin),
              static_cast<std::size_t>(8 * d * 4 * 32) * sizeof(float))
        << variant_name(v);
    EXPECT_TRUE(refused_because(can_run(v, turing, p), "needs compute capability"))
        << variant_name(v);
    EXPECT_EQ(can_run(v, a100, p).ok, s == 1 && mb == 2) << variant_name(v);
  }
  const std::string_view source = detail::find_template("gemvn.cu").source;
  for (const char* reason :
       {"A_RING (steps of A in flight per warp) is 2 to 16, for the wide shape (MAX_N >= 8) only",
        "MIN_BLOCKS is 2, or 3 with A through the ring (A_RING)"})
    EXPECT_NE(source.find(reason), std::string_view::npos) << reason;
  EXPECT_THROW(parse_variant("gemvnring_n4_r4_s1_d4_mb2"), InvalidArgument);  // not a wide extent
  EXPECT_THROW(parse_variant("gemvnring_n16_r4_s1_d16_mb2"), InvalidArgument);  // not in the space
}

// can_run() and the loader's shared-memory opt-in go by the family's shared_bytes(); a kernel
// with dynamic shared memory launched with less writes past it (clusterk's partial tile is larger
// than its stages, so a launch with the stages' size writes past what it was given).
// Families with static shared arrays (naive, tiled, gemvm, gemvn) launch with none.
TEST(CanRun, LaunchesAskForTheSharedMemoryTheFamilyDeclares) {
  for (const auto& v : variant_space()) {
    const detail::Family& family = detail::find_family(v.family);
    const bool dynamic = family.template_file == "warptile.cu" || family.template_file == "tf32mma.cu" ||
                         family.template_file == "tf32wgmma.cu" ||
                         family.template_file == "multistage.cu" || family.name == "gemvmring" ||
                         family.name == "gemvnring";
    for (const Problem& p : {Problem::dense(1000, 1000, 1000, 4), Problem::dense(37, 5, 3000, 1)})
      EXPECT_EQ(family.geometry(v, p).dynamic_shared_bytes, dynamic ? family.shared_bytes(v) : 0)
          << variant_name(v);
  }
}

// The default variant serves every problem that nothing tuned can: any alignment, one row or
// column, K == 0 (C = beta * C), and a full row slab of gemm() (65535 x 16 rows).
TEST(CanRun, TheDefaultVariantRunsEveryProblemGemmLaunches) {
  const auto device = synthetic_h200();
  const Variant v = default_variant();
  EXPECT_EQ(v.family, "warptile");
  for (const Problem& p : {Problem::dense(4097, 4097, 4097, 1), Problem::dense(1, 1, 1, 1),
                           Problem::dense(3, 5, 0, 2), Problem::dense(65535 * 16, 7, 9, 1),
                           Problem::dense(5, 2147483647LL, 3, 1)})
    EXPECT_TRUE(can_run(v, device, p).ok) << p.M << "x" << p.N << "x" << p.K << ": "
                                          << can_run(v, device, p).reason;
}

TEST(CanRun, OnlyFloat4VariantsNeedAlignmentFour) {
  const auto device = synthetic_h200();
  const Problem unaligned = Problem::dense(1000, 1000, 1000, 1);
  EXPECT_TRUE(can_run(parse_variant("warptile_bm128_bn128_bk8_wm64_wn32_tm8_tn4_v1_mb1"), device,
                      unaligned)
                  .ok);
  EXPECT_TRUE(refused_because(
      can_run(parse_variant("warptile_bm128_bn128_bk8_wm64_wn32_tm8_tn4_v4_mb1"), device, unaligned),
      "aligned to 4 floats"));
}

TEST(CanRun, AlignedCopiesServeEveryAlignment) {
  const auto device = synthetic_h200();
  const Variant padded = parse_variant("padded_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4");
  EXPECT_TRUE(can_run(padded, device, Problem::dense(4097, 4097, 4097, 1)).ok);
  // The copies of A and B (C is written in place) are 128 MiB at 4097^2; at 12001^2 they are
  // 1099 MiB: refused.
  EXPECT_TRUE(refused_because(can_run(padded, device, Problem::dense(12001, 12001, 12001, 1)),
                              "exceeds the 1024 MiB limit"));
}

TEST(CanRun, SplitKWorkspaceIsBounded) {
  // 8 slices of 1000 x 1000 are 32 MB of workspace: fine. Of 8192 x 8192, 2 GiB: refused with
  // the reason, while the unsplit twin runs the same problem.
  const auto device = synthetic_h200();
  const Variant split = parse_variant("splitk_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4_s8");
  EXPECT_TRUE(can_run(split, device, Problem::dense(1000, 1000, 1000, 4)).ok);
  const Problem big = Problem::dense(8192, 8192, 8192, 4);
  EXPECT_TRUE(refused_because(can_run(split, device, big),
                              "workspace of 2048 MiB exceeds the 1024 MiB limit"));
  EXPECT_TRUE(
      can_run(parse_variant("warptile_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4_mb1"), device, big).ok);
}

TEST(CanRun, ClusterSplitKNeedsHopperAndNoWorkspace) {
  // The cluster variant sums its slices in shared memory: the size that refuses the workspace
  // split-K above runs, but only where thread block clusters exist (compute capability 9.0).
  auto device = synthetic_h200();
  const Variant cluster = parse_variant("clusterk_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4_s8");
  EXPECT_TRUE(can_run(cluster, device, Problem::dense(8192, 8192, 8192, 4)).ok);
  device.cc_major = 8;
  device.cc_minor = 0;
  EXPECT_TRUE(refused_because(can_run(cluster, device, Problem::dense(1000, 1000, 1000, 4)),
                              "needs compute capability 9.0 or newer, the device has 8.0"));
  EXPECT_TRUE(can_run(parse_variant("splitk_bm128_bn128_bk16_wm64_wn64_tm8_tn4_v4_s8"), device,
                      Problem::dense(1000, 1000, 1000, 4))
                  .ok);
  // More than 8 blocks per cluster is not portable: such a name is not a variant.
  EXPECT_THROW(parse_variant("clusterk_bm64_bn64_bk16_wm32_wn32_tm4_tn4_v4_s16"), InvalidArgument);
}

TEST(CanRun, RejectsMoreThreadsPerBlockThanTheDeviceAllows) {
  auto device = synthetic_h200();
  device.max_threads_per_block = 512;
  EXPECT_TRUE(refused_because(can_run(parse_variant("tiled_t32_p0"), device, Problem::square(64)),
                              "1024 threads per block"));
  EXPECT_TRUE(can_run(parse_variant("tiled_t16_p0"), device, Problem::square(64)).ok);
}

TEST(CanRun, RejectsMoreSharedMemoryThanTheDeviceAllows) {
  auto device = synthetic_h200();
  device.max_shared_per_block_optin = 4096;  // tiled_t32_p1 needs 2 * 32 * 33 * 4 = 8448 bytes
  EXPECT_TRUE(refused_because(can_run(parse_variant("tiled_t32_p1"), device, Problem::square(64)),
                              "8448 bytes of shared memory"));
}

TEST(CanRun, RejectsAGridTallerThanTheDeviceAllows) {
  // 65535 blocks of 8 rows cover 524280 rows; one more row needs a 65536th block.
  const auto device = synthetic_h200();
  EXPECT_TRUE(refused_because(
      can_run(parse_variant("tiled_t8_p0"), device, Problem::dense(524281, 8, 8, 1)), "grid"));
  EXPECT_TRUE(can_run(parse_variant("tiled_t8_p0"), device, Problem::dense(524280, 8, 8, 1)).ok);
}

TEST(CanRun, RejectsAnUnknownFamilyAndAWrongParameterCount) {
  const auto device = synthetic_h200();
  EXPECT_FALSE(can_run(Variant{"warp", {}}, device, Problem::square(64)).ok);
  EXPECT_FALSE(can_run(Variant{"tiled", {{"t", 32}}}, device, Problem::square(64)).ok);
}

TEST(CanRun, DenseProblemsTakeTheAlignmentTheirLeadingDimensionsAllow) {
  EXPECT_EQ(Problem::dense(96, 80, 72).alignment, 4);
  EXPECT_EQ(Problem::dense(257, 255, 129).alignment, 1);
  EXPECT_EQ(Problem::dense(64, 66, 64).alignment, 2);
  EXPECT_EQ(Problem::dense(64, 64, 64, 1).alignment, 1);
}

TEST(CanRun, AlignmentClassFollowsPointersAndLeadingDimensions) {
  alignas(16) static float buffer[64];
  EXPECT_EQ(alignment_class(buffer, buffer, buffer, 8, 8, 8), 4);
  EXPECT_EQ(alignment_class(buffer + 2, buffer, buffer, 8, 8, 8), 2);
  EXPECT_EQ(alignment_class(buffer + 1, buffer, buffer, 8, 8, 8), 1);
  EXPECT_EQ(alignment_class(buffer, buffer, buffer, 8, 6, 8), 2);
  EXPECT_EQ(alignment_class(buffer, buffer, buffer, 8, 8, 7), 1);
}

}  // namespace
}  // namespace tilemm
