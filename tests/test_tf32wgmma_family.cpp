// The tf32wgmma family without a GPU: its space, which devices and problems can_run lets it serve
// (compute capability 9.0 alone, alignment class 4), and that NVRTC compiles it for sm_90a while
// the CUBIN stays filed under the device's sm_90. Every variant compiling without spills or
// serialized wgmmas: TensorCores/CompileFamily in test_nvrtc_compile.cpp. On the H200:
// EveryVariant (test_gpu_correctness), PrecisionGpu, DifferentialPrecision.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"
#include "synthetic_device.hpp"
#include "tilemm/error.hpp"
#include "tilemm/precision.hpp"
#include "tilemm/variant.hpp"

namespace tilemm {
namespace {

const Variant kHigh = parse_variant("tf32wgmma_bm128_bn128_bk16_st4_sp3");
const Variant kMedium = parse_variant("tf32wgmma_bm128_bn256_bk32_st2_sp1");

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
    // 3xTF32's partial sums do not fit beside a 256-wide tile's accumulators.
    if (v.param("sp") == 3) {
      EXPECT_LE(v.param("bn"), 128) << variant_name(v);
    }
  }
  EXPECT_EQ(precisions, (std::set<Precision>{Precision::high, Precision::medium}));
  EXPECT_EQ(precision_of(kHigh), Precision::high);
  EXPECT_EQ(precision_of(kMedium), Precision::medium);
  EXPECT_THROW(parse_variant("tf32wgmma_bm128_bn256_bk16_st4_sp3"), InvalidArgument);
  EXPECT_THROW(parse_variant("tf32wgmma_bm128_bn128_bk32_st4_sp1"), InvalidArgument);  // pipeline
  EXPECT_THROW(parse_variant("tf32wgmma_bm64_bn64_bk16_st4_sp1"), InvalidArgument);    // tile
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
    // The template's raw stages (A [BM][BK + 4], B [BK][BN]) and two buffers of planes (BM x BK
    // and BN x BK, twice with SPLIT 3), in floats.
    const int bm = v.param("bm"), bn = v.param("bn"), bk = v.param("bk");
    const int planes = v.param("sp") == 3 ? 2 : 1;
    const auto floats = static_cast<std::size_t>(v.param("st") * (bm * (bk + 4) + bk * bn) +
                                                 2 * planes * (bm + bn) * bk);
    EXPECT_EQ(f.shared_bytes(v), floats * sizeof(float)) << variant_name(v);
    EXPECT_EQ(f.geometry(v, p).dynamic_shared_bytes, f.shared_bytes(v));
    // One warpgroup of 128 threads per 64 rows.
    EXPECT_EQ(f.geometry(v, p).block[0], static_cast<unsigned>(bm / 64 * 128)) << variant_name(v);
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

}  // namespace
}  // namespace tilemm
