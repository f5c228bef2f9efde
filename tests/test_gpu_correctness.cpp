// Every variant of the space against a float64 CPU reference, on fresh random data, with C
// poisoned before each run and every element (and the padding between rows) checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <regex>
#include <sstream>

#include "gemm_check.hpp"
#include "family_registry.hpp"
#include "gpu_test_support.hpp"
#include "kernel_library.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm {
namespace {

struct Case {
  std::int64_t M, N, K;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // leading dimension beyond the minimum
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.M << "x" << c.N << "x" << c.K << " alpha " << c.alpha << " beta " << c.beta
      << " ld pads " << c.pad_a << "," << c.pad_b << "," << c.pad_c;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  std::ostringstream s;
  s << c.M << "x" << c.N << "x" << c.K;
  if (c.alpha != 1.0f || c.beta != 0.0f) s << "_scaled";
  if (c.pad_a || c.pad_b || c.pad_c) s << "_padded";
  return s.str();
}

constexpr float kPaddingSentinel = 12345.0f;

// Compiles and loads `variants` on all cores. Each test process would otherwise compile the ~290
// variants one after another (up to ~1 CPU-second each) before its first check: that was most of
// the suite's time on a fresh machine (60-90 s per EveryVariant process) and of a
// compute-sanitizer run. A variant that fails here fails again, with its name, where it runs.
void load_in_parallel(const std::vector<Variant>& variants, const DeviceInfo& device) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    if (cudaSetDevice(device.ordinal) != cudaSuccess) return;
    for (std::size_t i = next++; i < variants.size(); i = next++) {
      try {
        detail::kernel_for(device, variants[i]);
      } catch (const std::exception&) {
        // Reported by run_variant() in the test's loop.
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

// Which variants EveryVariant checks; all of them unless the environment narrows it:
//   TILEMM_TEST_VARIANTS=<regex>      those whose names match (to look at one family);
//   TILEMM_TEST_VARIANT_SHARD=<i>/<n> every n-th variant of the space from the i-th (0-based),
//                                     so n processes check it all, each family spread evenly
//                                     over them (how gpu-sanitize-all.sh spreads racecheck).
// A value that does not parse fails the test, and so does a selection that keeps no variant.
struct VariantSelection {
  std::optional<std::regex> pattern;
  std::string pattern_text;
  std::size_t shard = 0, shards = 1;
  std::string error;  // non-empty: the environment is malformed

  bool keeps(std::size_t index, const std::string& name) const {
    return index % shards == shard && (!pattern || std::regex_search(name, *pattern));
  }
  std::string describe() const {
    std::string s = "shard " + std::to_string(shard) + "/" + std::to_string(shards);
    if (pattern) s += ", names matching '" + pattern_text + "'";
    return s;
  }
};

const VariantSelection& variant_selection() {
  static const VariantSelection selection = [] {
    VariantSelection s;
    if (const char* p = std::getenv("TILEMM_TEST_VARIANTS"); p != nullptr && *p != '\0') {
      try {
        s.pattern = std::regex(p);
        s.pattern_text = p;
      } catch (const std::regex_error& e) {
        s.error = std::string("TILEMM_TEST_VARIANTS is not a regular expression: ") + e.what();
      }
    }
    if (const char* p = std::getenv("TILEMM_TEST_VARIANT_SHARD"); p != nullptr && *p != '\0') {
      unsigned long i = 0, n = 0;
      char tail = 0;
      if (std::sscanf(p, "%lu/%lu%c", &i, &n, &tail) != 2 || n == 0 || i >= n)
        s.error = std::string("TILEMM_TEST_VARIANT_SHARD must be <i>/<n> with i < n, not '") + p + "'";
      else
        s.shard = i, s.shards = n;
    }
    return s;
  }();
  return selection;
}

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, MatchesFloat64Reference) {
  TILEMM_REQUIRE_DEVICE();
  const Case c = GetParam();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);

  const std::int64_t lda = std::max<std::int64_t>(1, c.K) + c.pad_a;
  const std::int64_t ldb = c.N + c.pad_b;
  const std::int64_t ldc = c.N + c.pad_c;
  const auto a = testing::random_matrix(static_cast<std::size_t>(c.M * lda), rng);
  const auto b = testing::random_matrix(static_cast<std::size_t>(c.K * ldb), rng);
  auto c0 = testing::random_matrix(static_cast<std::size_t>(c.M * ldc), rng);
  for (std::int64_t i = 0; i < c.M; ++i)
    for (std::int64_t j = c.N; j < ldc; ++j) c0[i * ldc + j] = kPaddingSentinel;
  // beta == 0 must never read C: poison it with NaN so that a read shows up in the result.
  auto initial_c = c0;
  if (c.beta == 0.0f)
    for (std::int64_t i = 0; i < c.M; ++i)
      for (std::int64_t j = 0; j < c.N; ++j)
        initial_c[i * ldc + j] = std::numeric_limits<float>::quiet_NaN();

  const auto ref = testing::reference_gemm(c.M, c.N, c.K, c.alpha, a, lda, b, ldb, c.beta, c0, ldc);

  testing::DeviceBuffer A(a.size()), B(b.size()), C(initial_c.size());
  A.upload(a);
  B.upload(b);
  GemmArgs args;
  args.M = c.M;
  args.N = c.N;
  args.K = c.K;
  args.alpha = c.alpha;
  args.A = A.get();
  args.lda = lda;
  args.B = B.get();
  args.ldb = ldb;
  args.beta = c.beta;
  args.C = C.get();
  args.ldc = ldc;

  const DeviceInfo& device = current_device();
  const VariantSelection& selection = variant_selection();
  ASSERT_TRUE(selection.error.empty()) << selection.error;
  std::vector<Variant> runnable;
  std::size_t kept = 0;
  const auto space = variant_space();
  for (std::size_t i = 0; i < space.size(); ++i) {
    const Variant& v = space[i];
    if (!selection.keeps(i, variant_name(v))) continue;
    ++kept;
    // Each variant at the precision it computes at (the tf32mma family: high or medium).
    Problem problem = args.problem();
    problem.precision = precision_of(v);
    const Verdict verdict = can_run(v, device, problem);
    if (verdict) {
      runnable.push_back(v);
    } else {
      // Only an alignment mismatch may keep a variant from a valid problem this small, a
      // family that needs a newer GPU (clusterk before compute capability 9.0), or the shape
      // rule of a family that serves only some shapes (gemvm: M <= 16, gemvn: N <= 16).
      const auto& family = detail::find_family(v.family);
      EXPECT_TRUE(verdict.reason.find("aligned") != std::string::npos ||
                  verdict.reason.find("needs compute capability") != std::string::npos ||
                  (family.check_problem != detail::any_problem &&
                   family.check_problem(v, problem) == verdict.reason))
          << variant_name(v) << ": " << verdict.reason;
    }
  }
  ASSERT_GT(kept, 0u) << selection.describe() << " keeps no variant";
  // A narrowed selection (one family, say gemvm: M <= 16) may hold no variant for this shape.
  if (runnable.empty() && (selection.pattern || selection.shards > 1))
    GTEST_SKIP() << "no variant of the selection (" << selection.describe() << ") runs this shape";
  load_in_parallel(runnable, device);
  int checked_variants = 0;
  for (const auto& v : runnable) {
    const std::string name = variant_name(v);
    C.upload(initial_c);
    run_variant(v, args);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
    const auto out = C.download();
    std::int64_t bad = 0;
    std::ostringstream first;
    for (std::int64_t i = 0; i < c.M; ++i) {
      for (std::int64_t j = 0; j < ldc; ++j) {
        const float got = out[i * ldc + j];
        bool ok;
        double want;
        if (j >= c.N) {
          want = kPaddingSentinel;
          ok = got == kPaddingSentinel;
        } else {
          want = ref.value[i * c.N + j];
          ok = std::isfinite(got) &&
               std::fabs(got - want) <=
                   testing::tolerance(c.K, ref.magnitude[i * c.N + j], precision_of(v));
        }
        if (!ok && bad++ < 5) first << " C[" << i << "][" << j << "]=" << got << " want " << want;
      }
    }
    EXPECT_EQ(bad, 0) << name << ": " << bad << " wrong elements;" << first.str();
    ++checked_variants;
  }
  EXPECT_GT(checked_variants, 0) << selection.describe();
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, EveryVariant,
    ::testing::Values(Case{1, 1, 1}, Case{1, 1000, 1}, Case{33, 65, 17}, Case{127, 129, 131},
                      Case{1000, 1000, 1000}, Case{1024, 1024, 1024}, Case{2049, 31, 4099},
                      Case{65, 33, 257, 1.5f, -0.75f}, Case{127, 129, 131, -0.5f, 2.0f},
                      Case{33, 65, 17, 1.0f, 0.0f, 3, 5, 7},
                      Case{257, 255, 129, 0.75f, 1.25f, 1, 2, 3},
                      Case{1000, 1000, 1000, 2.0f, 0.5f, 4, 4, 4},
                      // Alignment class 4 (the float4 variants run) at sizes off every tile.
                      Case{96, 80, 72}, Case{260, 196, 132}, Case{516, 1028, 36, 0.5f, -1.0f},
                      Case{4, 4, 4}, Case{4, 8, 1000}, Case{1004, 12, 4},
                      // M of 9 to 16 (gemvm's and gemvmring's wide shape, every tiled family's
                      // partial row of tiles), N off every block of columns.
                      Case{13, 300, 200},
                      // N of 9 to 16 (gemvn's and gemvnring's wide shape): K over several stages
                      // of B and laps of A's ring, ending inside a float4 of aligned rows.
                      Case{211, 13, 1001, 1.0f, 0.0f, 3, 3, 3},
                      // More tiles than an H200 has SMs for every tf32wgmma tile, not in whole
                      // waves: persistent blocks (sk 1) cut tiles in K and hand partial sums on.
                      Case{3076, 1540, 68, 1.25f, 0.5f},
                      // Fewer tiles than half the SMs for every tf32wgmma and streamk tile, and K
                      // long enough that each is cut across several blocks.
                      Case{300, 516, 7000, 1.25f, 0.5f}),
    case_name);

// One variant of each family, chosen as the one that needs the most alignment the problem has
// (float4 where it can), at shapes off every tile: the test that compute-sanitizer runs
// (scripts/gpu-tune-bench.sh), small enough for its tools' slowdown.
TEST(EveryFamily, OneRepresentativeMatchesTheReferenceOffEveryTile) {
  TILEMM_REQUIRE_DEVICE();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const DeviceInfo& device = current_device();
  struct Shape {
    std::int64_t M, N, K;
  };
  // 96x80x260: class 4, K in 17 tiles of 16 (uneven split-K slices); 67x45x129: class 1;
  // 12x8x1000 (class 4) and 13x7x1001 (class 1): shapes for the skinny families too; 130x300x7
  // (class 1): for shortk, K <= 32.
  std::map<std::string, int> checked;
  for (const Shape& shape : {Shape{96, 80, 260}, Shape{67, 45, 129}, Shape{12, 8, 1000},
                             Shape{13, 7, 1001}, Shape{130, 300, 7}}) {
    testing::DenseProblem problem(shape.M, shape.N, shape.K, 0.75f, -1.25f, rng);
    for (const auto& family : family_names()) {
      auto vec = [](const Variant& v) {
        for (const auto& [key, value] : v.params)
          if (key == "v") return value;
        return 1;
      };
      // At the precision each variant computes at (tf32mma: high and medium; its split 3, the
      // first of the space that runs, is the one checked, against the high tolerance).
      const auto at_precision = [&](const Variant& v) {
        Problem p = problem.args().problem();
        p.precision = precision_of(v);
        return p;
      };
      const auto space = variant_space(family);
      std::optional<Variant> pick;
      for (const auto& v : space)
        if (can_run(v, device, at_precision(v)) && (!pick || vec(v) > vec(*pick))) pick = v;
      const Variant& first = space.front();
      if (!pick && can_run(first, device, at_precision(first))
                       .reason.find("needs compute capability") != std::string::npos)
        continue;  // a family for newer GPUs (clusterk before compute capability 9.0)
      if (const auto& f = detail::find_family(family); !pick && f.check_problem != detail::any_problem)
        continue;  // a family for other shapes (gemvm, gemvn: M or N <= 16)
      if (!pick && std::all_of(space.begin(), space.end(), [&](const Variant& v) {
            return detail::find_family(family).required_alignment(v) >
                   problem.args().problem().alignment;
          }))
        continue;  // a family for aligned problems alone (tf32wgmma: 16-byte copies)
      ASSERT_TRUE(pick.has_value()) << family;
      ++checked[family];
      const std::string name = variant_name(*pick);
      const auto check =
          problem.check(problem.run([&](const GemmArgs& args) { run_variant(*pick, args); }, name),
                        precision_of(*pick));
      EXPECT_EQ(check.wrong, 0) << name << " at " << shape.M << "x" << shape.N << "x" << shape.K
                                << ", first " << check.first;
    }
  }
  for (const auto& family : family_names()) {
    if (detail::variant_builds_for(variant_space(family).front(), device.arch())) {
      EXPECT_GT(checked[family], 0) << family << " was checked at none of the shapes";
    }
  }
}

// Split-K partial products go through a workspace allocated on the caller's stream. Two streams
// running the same split variant at once must not share one, and the fixed-order reduction must
// give the same bits every time: 16 launches per stream, each into its own C, all equal to the
// first and to the float64 reference.
TEST(SplitK, ConcurrentStreamsKeepTheirOwnWorkspaceAndRepeatBitForBit) {
  TILEMM_REQUIRE_DEVICE();
  const Variant v = parse_variant("splitk_bm64_bn64_bk16_wm32_wn32_tm8_tn4_v4_s4");
  const std::int64_t M = 200, N = 300, K = 1000;  // off every tile; K in 4 uneven slices
  constexpr int kLaunches = 16;
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);

  struct Stream {
    cudaStream_t stream = nullptr;
    std::vector<float> a, b;
    std::unique_ptr<testing::DeviceBuffer> A, B;
    std::vector<std::unique_ptr<testing::DeviceBuffer>> C;
  };
  Stream streams[2];
  for (auto& s : streams) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), cudaSuccess);
    s.a = testing::random_matrix(static_cast<std::size_t>(M * K), rng);
    s.b = testing::random_matrix(static_cast<std::size_t>(K * N), rng);
    s.A = std::make_unique<testing::DeviceBuffer>(s.a.size());
    s.B = std::make_unique<testing::DeviceBuffer>(s.b.size());
    s.A->upload(s.a);
    s.B->upload(s.b);
    for (int i = 0; i < kLaunches; ++i)
      s.C.push_back(std::make_unique<testing::DeviceBuffer>(static_cast<std::size_t>(M * N)));
  }
  for (int i = 0; i < kLaunches; ++i)
    for (auto& s : streams) {
      run_variant(v,
                  testing::dense_args(M, N, K, 1.0f, s.A->get(), s.B->get(), 0.0f,
                                      s.C[static_cast<std::size_t>(i)]->get()),
                  s.stream);
    }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  for (auto& s : streams) {
    const auto ref = testing::reference_gemm(M, N, K, 1.0f, s.a, K, s.b, N, 0.0f, {}, N);
    const auto first = s.C[0]->download();
    std::int64_t bad = 0;
    for (std::size_t e = 0; e < first.size(); ++e)
      if (!(std::fabs(first[e] - ref.value[e]) <= testing::tolerance(K, ref.magnitude[e]))) ++bad;
    EXPECT_EQ(bad, 0) << "elements off the float64 reference";
    for (int i = 1; i < kLaunches; ++i)
      EXPECT_EQ(s.C[static_cast<std::size_t>(i)]->download(), first) << "launch " << i;
    cudaStreamDestroy(s.stream);
  }
}

// Runs `variant` and `twin` on `problem` (of `shape`, for the messages): the variant's C must be
// the twin's bit for bit, and within the float64 bound.
void expect_the_bits_of_twin(testing::DenseProblem& problem, const std::string& shape,
                             const std::string& variant, const std::string& twin) {
  SCOPED_TRACE(variant + " at " + shape);
  auto run = [&](const std::string& name) {
    return problem.run([&](const GemmArgs& args) { run_variant(parse_variant(name), args); }, name);
  };
  const auto got = run(variant);
  const auto want = run(twin);
  std::int64_t different = 0;
  for (std::size_t e = 0; e < got.size(); ++e)
    if (std::memcmp(&got[e], &want[e], sizeof(float)) != 0) ++different;
  EXPECT_EQ(different, 0) << "elements that differ from " << twin;
  const auto check = problem.check(got);
  EXPECT_EQ(check.wrong, 0) << "elements off the float64 reference, first " << check.first;
}

std::string shape_name(std::int64_t M, std::int64_t N, std::int64_t K) {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

// The cluster variant adds the same partial products in the same order as split-K's reduce
// kernel, so the two give identical results: checked bit for bit, for 2, 4 and 8 slices, scalar
// and float4, at a shape off every tile with beta != 0, and at a K so short that some blocks of
// a cluster have no K tile and contribute zeros.
TEST(ClusterK, SumsTheSlicesExactlyAsSplitKDoes) {
  TILEMM_REQUIRE_DEVICE();
  if (current_device().cc_major < 9) GTEST_SKIP() << "thread block clusters need compute capability 9.0";
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct Shape {
    std::int64_t M, N, K;
  };
  for (const Shape& shape : {Shape{200, 300, 1000}, Shape{130, 68, 20}}) {  // aligned for v4
    testing::DenseProblem problem(shape.M, shape.N, shape.K, 0.75f, -1.25f, rng);
    for (const char* tiles : {"bm64_bn64_bk16_wm32_wn32_tm4_tn4", "bm128_bn64_bk16_wm64_wn32_tm8_tn4"})
      for (int vec : {1, 4})
        for (int slices : {2, 4, 8}) {
          const std::string suffix =
              std::string(tiles) + "_v" + std::to_string(vec) + "_s" + std::to_string(slices);
          expect_the_bits_of_twin(problem, shape_name(shape.M, shape.N, shape.K),
                                  "clusterk_" + suffix, "splitk_" + suffix);
        }
  }
}

// streamk (multistage's kernels as persistent blocks, the last waves cut in K): a cut tile is
// finished by the block with its last K tiles, which adds the others' partial sums in block order,
// so a run gives the same bits as the run before it whatever the blocks' timing. Checked twice
// over at shapes where every tile is cut (2052 x 2052: 153 tiles of 128 x 256), where whole
// tiles come first (4200 x 2100: 297 tiles, more than two waves) and where the tiles are fewer
// than the blocks and each is cut across several (300 x 2100 x 700: 27 tiles of 88 K tiles), on
// the H200's 132 SMs, with edge tiles, K ending inside a K tile and beta != 0; and against the
// float64 reference.
TEST(StreamK, CutTilesGiveTheSameBitsEveryRun) {
  TILEMM_REQUIRE_DEVICE();
  if (current_device().cc_major < 8)
    GTEST_SKIP() << "streamk's cp.async needs compute capability 8.0";
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct Shape {
    std::int64_t M, N, K;
  };
  // Aligned for v4.
  for (const Shape& shape : {Shape{2052, 2052, 44}, Shape{4200, 2100, 28}, Shape{300, 2100, 700}}) {
    testing::DenseProblem problem(shape.M, shape.N, shape.K, 1.25f, -0.5f, rng);
    for (const auto& v : variant_space("streamk")) {
      const std::string name = variant_name(v);
      expect_the_bits_of_twin(problem, shape_name(shape.M, shape.N, shape.K), name, name);
    }
  }
}

// The skinny families (gemvm: M <= 16, gemvn: N <= 16) over the extents that matter to them:
// each instance fixes a family and its small extent and sweeps K (1, a partial vector, whole
// warps, uneven slices, an odd length), the other extent (1, off every block, large and odd),
// the layout of the operands and beta (0 with C poisoned by NaN against alpha 1.5, beta -0.75).
// The kernels choose float4, float2 or scalar loads per operand from the actual pointers and
// leading dimensions, so the layouts cover each combination: everything 16-byte aligned (leading
// dimensions rounded up to 4, the padding between rows checked), dense (ldb = 1 for N = 1: the
// contiguous column of B), every pointer one float off, and only A or only B and C off. Every
// variant of the size that serves the extent runs every problem.
struct SkinnyCase {
  const char* family;
  std::int64_t extent;  // M for gemvm, N for gemvn
};

void PrintTo(const SkinnyCase& c, std::ostream* os) { *os << c.family << " at " << c.extent; }

class SkinnyFamily : public ::testing::TestWithParam<SkinnyCase> {};

// How the operands of a skinny test problem lie in memory.
enum class SkinnyLayout { aligned, dense, all_off, a_off, b_off };

const char* layout_name(SkinnyLayout layout) {
  switch (layout) {
    case SkinnyLayout::aligned: return "aligned";
    case SkinnyLayout::dense: return "dense";
    case SkinnyLayout::all_off: return "all pointers off";
    case SkinnyLayout::a_off: return "A off";
    case SkinnyLayout::b_off: return "B and C off";
  }
  return "?";
}

// The variants of `family` that this device runs (the split ones need clusters, sm_90).
std::vector<Variant> skinny_space(const char* family, const DeviceInfo& device) {
  std::vector<Variant> out;
  for (const auto& v : variant_space(family))
    if (detail::min_compute_capability(detail::find_family(family), v) <=
        device.cc_major * 10 + device.cc_minor)
      out.push_back(v);
  return out;
}

TEST_P(SkinnyFamily, EveryVariantMatchesFloat64AcrossKLayoutAndBeta) {
  TILEMM_REQUIRE_DEVICE();
  const SkinnyCase sc = GetParam();
  const bool over_m = std::string(sc.family).rfind("gemvm", 0) == 0;  // gemvm, gemvmring
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const DeviceInfo& device = current_device();
  const auto space = skinny_space(sc.family, device);
  load_in_parallel(space, device);
  int size = 1;  // of the variants that serve the extent
  while (size < sc.extent) size *= 2;
  const auto of_size = std::count_if(space.begin(), space.end(), [&](const Variant& v) {
    return v.params.front().second == size;
  });
  ASSERT_GE(of_size, 4);

  for (std::int64_t K : {1, 5, 64, 1000, 4099})
    for (std::int64_t other : {1, 33, 1000, 4097})
      for (const SkinnyLayout layout : {SkinnyLayout::aligned, SkinnyLayout::dense,
                                        SkinnyLayout::all_off, SkinnyLayout::a_off,
                                        SkinnyLayout::b_off})
        for (const float beta : {0.0f, -0.75f}) {
          // Both betas on the two extreme layouts; the others once each.
          const bool extreme = layout == SkinnyLayout::aligned || layout == SkinnyLayout::all_off;
          if (!extreme && beta == 0.0f) continue;
          const std::int64_t M = over_m ? sc.extent : other, N = over_m ? other : sc.extent;
          const float alpha = beta == 0.0f ? 1.0f : 1.5f;
          const bool a_off = layout == SkinnyLayout::all_off || layout == SkinnyLayout::a_off;
          const bool b_off = layout == SkinnyLayout::all_off || layout == SkinnyLayout::b_off;
          auto ld = [&](std::int64_t row, bool off) {
            if (off) return row + 1;
            return layout == SkinnyLayout::dense ? row : (row + 3) / 4 * 4;
          };
          const std::int64_t lda = ld(K, a_off), ldb = ld(N, b_off), ldc = ld(N, b_off);
          const std::int64_t offset_a = a_off ? 1 : 0, offset_bc = b_off ? 1 : 0;  // floats
          SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                       " " + layout_name(layout) + " beta " + std::to_string(beta));
          const auto a = testing::random_matrix(static_cast<std::size_t>(M * lda), rng);
          const auto b = testing::random_matrix(static_cast<std::size_t>(K * ldb), rng);
          auto c0 = testing::random_matrix(static_cast<std::size_t>(M * ldc), rng);
          for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = N; j < ldc; ++j) c0[static_cast<std::size_t>(i * ldc + j)] = kPaddingSentinel;
          auto initial_c = c0;
          if (beta == 0.0f)
            for (std::int64_t i = 0; i < M; ++i)
              for (std::int64_t j = 0; j < N; ++j)
                initial_c[static_cast<std::size_t>(i * ldc + j)] = std::numeric_limits<float>::quiet_NaN();
          const auto ref = testing::reference_gemm(M, N, K, alpha, a, lda, b, ldb, beta, c0, ldc);

          auto shifted = [&](const std::vector<float>& host, std::int64_t offset) {
            std::vector<float> out(static_cast<std::size_t>(offset), 0.0f);
            out.insert(out.end(), host.begin(), host.end());
            return out;
          };
          testing::DeviceBuffer A(a.size() + 1), B(b.size() + 1), C(initial_c.size() + 1);
          A.upload(shifted(a, offset_a));
          B.upload(shifted(b, offset_bc));
          GemmArgs args;
          args.M = M;
          args.N = N;
          args.K = K;
          args.alpha = alpha;
          args.A = A.get() + offset_a;
          args.lda = lda;
          args.B = B.get() + offset_bc;
          args.ldb = ldb;
          args.beta = beta;
          args.C = C.get() + offset_bc;
          args.ldc = ldc;
          if (layout == SkinnyLayout::aligned) {
            ASSERT_EQ(args.problem().alignment, 4);
          }
          if (layout == SkinnyLayout::all_off) {
            ASSERT_EQ(args.problem().alignment, 1);
          }

          int ran = 0;
          for (const auto& v : space) {
            if (!can_run(v, device, args.problem())) continue;
            const std::string name = variant_name(v);
            C.upload(shifted(initial_c, offset_bc));
            run_variant(v, args);
            ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
            const auto out = C.download();
            std::int64_t bad = 0;
            std::ostringstream first;
            for (std::int64_t i = 0; i < M; ++i)
              for (std::int64_t j = 0; j < ldc; ++j) {
                const float got = out[static_cast<std::size_t>(offset_bc + i * ldc + j)];
                const std::size_t e = static_cast<std::size_t>(i * N + j);
                const bool ok = j >= N ? got == kPaddingSentinel
                                       : std::isfinite(got) &&
                                             std::fabs(got - ref.value[e]) <=
                                                 testing::tolerance(K, ref.magnitude[e]);
                if (!ok && bad++ < 5)
                  first << " C[" << i << "][" << j << "]=" << got << " want "
                        << (j >= N ? kPaddingSentinel : ref.value[e]);
              }
            EXPECT_EQ(bad, 0) << name << ": " << bad << " wrong elements;" << first.str();
            ++ran;
          }
          // Every variant of the size, whatever the layout: no alignment class keeps one off.
          EXPECT_EQ(ran, of_size);
        }
}

INSTANTIATE_TEST_SUITE_P(
    Extents, SkinnyFamily,
    ::testing::Values(SkinnyCase{"gemvm", 1}, SkinnyCase{"gemvm", 2}, SkinnyCase{"gemvm", 3},
                      SkinnyCase{"gemvm", 7}, SkinnyCase{"gemvm", 8}, SkinnyCase{"gemvm", 15},
                      SkinnyCase{"gemvm", 16}, SkinnyCase{"gemvn", 1}, SkinnyCase{"gemvn", 2},
                      SkinnyCase{"gemvn", 3}, SkinnyCase{"gemvn", 7}, SkinnyCase{"gemvn", 8},
                      SkinnyCase{"gemvn", 15}, SkinnyCase{"gemvn", 16}, SkinnyCase{"gemvmring", 5},
                      SkinnyCase{"gemvmring", 16}, SkinnyCase{"gemvnring", 5},
                      SkinnyCase{"gemvnring", 16}),
    [](const ::testing::TestParamInfo<SkinnyCase>& param) {
      return std::string(param.param.family) + "_" + std::to_string(param.param.extent);
    });

// The skinny K split sums the warps' and the cluster's partial sums in a fixed order: within the
// float64 bound, and the same bits on every launch. Clusters of 2, 4 and 8 blocks, float4 and
// scalar paths (an odd K makes lda odd: A is read with scalar loads), and the dense column
// (N = 1, ldb = 1) whose B is read with float4 loads along K.
TEST(SkinnyFamily, SplitResultsRepeatBitForBit) {
  TILEMM_REQUIRE_DEVICE();
  if (current_device().cc_major < 9) GTEST_SKIP() << "thread block clusters need compute capability 9.0";
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  struct Run {
    const char* variant;
    std::int64_t M, N, K;  // dense
  };
  for (const Run& r : {Run{"gemvm_m1_c4_s8", 1, 4096, 10000}, Run{"gemvm_m16_c4_s2", 13, 1000, 10001},
                       Run{"gemvn_n4_r1_s8", 300, 4, 10000}, Run{"gemvn_n1_r4_s4", 64, 1, 10000},
                       Run{"gemvn_n16_r4_s2", 100, 16, 9999}}) {
    testing::DenseProblem problem(r.M, r.N, r.K, 1.0f, 0.0f, rng);
    const Variant v = parse_variant(r.variant);
    ASSERT_TRUE(can_run(v, current_device(), problem.args().problem())) << r.variant;
    auto run = [&] {
      return problem.run([&](const GemmArgs& args) { run_variant(v, args); }, r.variant);
    };
    const auto first = run();
    const auto check = problem.check(first);
    EXPECT_EQ(check.wrong, 0) << r.variant << ", first " << check.first;
    for (int i = 0; i < 8; ++i) EXPECT_EQ(run(), first) << r.variant << " launch " << i;
  }
}

// kslice cuts K into as many slices as K holds runs of KL: a tiny C with K near 100000 is
// hundreds of blocks. Its loads are scalar, so a problem of alignment class 1 (an odd leading
// dimension, and A one float past an aligned address) runs it too. Each variant of the family on
// such a problem with beta != 0 matches the float64 reference, and a split's fixed-order reduction
// gives the same bits on every launch.
TEST(KSlice, ManySlicesAtAnyAlignmentMatchTheReferenceAndRepeatBitForBit) {
  TILEMM_REQUIRE_DEVICE();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const DeviceInfo& device = current_device();
  struct Run {
    std::int64_t M, N, K;
  };
  for (const Run& r : {Run{3, 5, 99991}, Run{32, 8, 8960}, Run{70, 33, 4097}}) {
    const std::int64_t lda = r.K + 3, ldb = r.N + 1, ldc = r.N + 2;
    const auto a = testing::random_matrix(static_cast<std::size_t>(r.M * lda + 1), rng);
    const auto b = testing::random_matrix(static_cast<std::size_t>(r.K * ldb), rng);
    const auto c0 = testing::random_matrix(static_cast<std::size_t>(r.M * ldc), rng);
    const std::vector<float> a_rows(a.begin() + 1, a.end());  // A starts one float in
    const auto ref =
        testing::reference_gemm(r.M, r.N, r.K, 0.5f, a_rows, lda, b, ldb, -1.5f, c0, ldc);
    testing::DeviceBuffer A(a.size()), B(b.size()), C(c0.size());
    A.upload(a);
    B.upload(b);
    GemmArgs args;
    args.M = r.M;
    args.N = r.N;
    args.K = r.K;
    args.alpha = 0.5f;
    args.A = A.get() + 1;
    args.lda = lda;
    args.B = B.get();
    args.ldb = ldb;
    args.beta = -1.5f;
    args.C = C.get();
    args.ldc = ldc;
    ASSERT_EQ(args.problem().alignment, 1);
    int checked = 0;
    for (const auto& v : variant_space("kslice")) {
      if (!can_run(v, device, args.problem())) continue;
      const std::string name = variant_name(v) + " at " + shape_name(r.M, r.N, r.K);
      auto run = [&] {
        C.upload(c0);
        run_variant(v, args);
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << name;
        return C.download();
      };
      const auto first = run();
      std::int64_t wrong = 0;
      for (std::int64_t i = 0; i < r.M; ++i)
        for (std::int64_t j = 0; j < ldc; ++j) {
          const float got = first[i * ldc + j];
          const bool ok = j >= r.N ? got == c0[i * ldc + j]  // between rows: untouched
                                   : std::isfinite(got) &&
                                         std::fabs(got - ref.value[i * r.N + j]) <=
                                             testing::tolerance(r.K, ref.magnitude[i * r.N + j],
                                                                Precision::highest);
          wrong += ok ? 0 : 1;
        }
      EXPECT_EQ(wrong, 0) << name;
      for (int i = 0; i < 3; ++i) EXPECT_EQ(run(), first) << name << " launch " << i;
      ++checked;
    }
    EXPECT_GT(checked, 0) << shape_name(r.M, r.N, r.K);
  }
}

// Runs every variant of the ring family `ring` that this device can run (the split variants, and
// gemvnring's of three blocks per SM, need compute capability 9.0) on each dense problem, against
// its plain twin `<plain><extent>_<rest>_s<s>`, the extent (parameter `extent_key`: 8 or 16) being
// the one that covers the problem's M (`m`) or N (`n`): the same bits expected.
struct RingRun {
  std::int64_t M, N, K;
};
void expect_ring_variants_give_their_twins_bits(const char* ring, const char* extent_key,
                                                const std::string& plain, const std::string& rest,
                                                std::initializer_list<RingRun> runs) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const int cc = current_device().cc_major * 10 + current_device().cc_minor;
  const detail::Family& family = detail::find_family(ring);
  for (const RingRun& r : runs) {
    testing::DenseProblem problem(r.M, r.N, r.K, 1.0f, 0.0f, rng);
    const std::int64_t narrow = std::string(extent_key) == "m" ? r.M : r.N;
    const int extent = narrow > 8 ? 16 : 8;
    int compared = 0;
    for (const auto& v : variant_space(ring)) {
      if (v.param(extent_key) != extent || detail::min_compute_capability(family, v) > cc) continue;
      const std::string twin =
          plain + std::to_string(extent) + "_" + rest + "_s" + std::to_string(v.param("s"));
      expect_the_bits_of_twin(problem, shape_name(r.M, r.N, r.K), variant_name(v), twin);
      ++compared;
    }
    EXPECT_GT(compared, 0) << ring << " has no variant of " << extent_key << " " << extent
                           << " that this device runs";
  }
}

// gemvmring moves B through shared memory instead of registers and changes nothing else: every
// column of C meets the same groups of B and A in the same order, whichever lane and how many
// columns per lane (c) hold it, so its C is gemvm's (c 4) bit for bit, on aligned rows (copies of
// 16 or 8 bytes, cut short at N) and on unaligned ones (4-byte copies: an odd N), with K and N off
// every group and block.
TEST(GemvmRing, GivesTheBitsOfTheGemvmItStreamsFor) {
  TILEMM_REQUIRE_DEVICE();
  expect_ring_variants_give_their_twins_bits(
      "gemvmring", "m", "gemvm_m", "c4", {{16, 256, 4096}, {13, 1001, 1003}, {5, 132, 77}, {8, 4096, 8}});
}

// gemvnring moves A through shared memory instead of registers and changes nothing else: every
// lane multiplies the same float4s of A by the same rows of the stage of B in the same order, so
// its C is gemvn's bit for bit, on aligned rows (16-byte copies, cut short at K) and unaligned
// ones (4-byte copies: an odd K), with M and K off every block, step and stage, and K split into
// slices shorter than the ring.
TEST(GemvnRing, GivesTheBitsOfTheGemvnItStreamsFor) {
  TILEMM_REQUIRE_DEVICE();
  expect_ring_variants_give_their_twins_bits(
      "gemvnring", "n", "gemvn_n", "r4", {{4096, 16, 4096}, {1001, 13, 1003}, {37, 5, 77}, {300, 8, 9}});
}

TEST(KernelLibrary, SecondLaunchOfAVariantCompilesNothing) {
  TILEMM_REQUIRE_DEVICE();
  testing::DeviceBuffer A(64 * 64), B(64 * 64), C(64 * 64);
  std::mt19937_64 rng(testing::fresh_seed());
  A.upload(testing::random_matrix(64 * 64, rng));
  B.upload(testing::random_matrix(64 * 64, rng));
  GemmArgs args;
  args.M = args.N = args.K = 64;
  args.A = A.get();
  args.B = B.get();
  args.C = C.get();
  args.lda = args.ldb = args.ldc = 64;
  const Variant v = parse_variant("tiled_t8_p1");
  run_variant(v, args);
  const auto after_first = detail::nvrtc_compile_count();
  for (int i = 0; i < 3; ++i) run_variant(v, args);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(detail::nvrtc_compile_count(), after_first);
}

}  // namespace
}  // namespace tilemm
