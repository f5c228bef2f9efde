// The tuner's GpuBench and its kernels (kernel_templates/support/verification.cu) on the GPU:
// random inputs, the reference with its magnitudes, the bound check, and verify/time of
// candidates and row-split plans. Every test skips without a CUDA device.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_bench.hpp"
#include "gpu_test_support.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "nvrtc_compiler.hpp"
#include "program_output.hpp"
#include "stream_hold.hpp"
#include "support_kernels.hpp"
#include "timing_method.hpp"
#include "tilemm/error.hpp"

namespace tilemm {
namespace {

using testing::cuda_ok;
using testing::DeviceBuffer;
using tuner::CheckResult;
using tuner::GpuBench;

// A problem with padded leading dimensions (alignment 1: the bench's buffers are its own).
Problem padded(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t pad_a, std::int64_t pad_b,
               std::int64_t pad_c) {
  Problem p;
  p.M = M;
  p.N = N;
  p.K = K;
  p.lda = K + pad_a;
  p.ldb = N + pad_b;
  p.ldc = N + pad_c;
  p.alignment = 1;
  return p;
}

// The naive kernel, a candidate known to be right.
GpuBench::Launcher naive_candidate() {
  const detail::LoadedKernel* naive = &detail::kernel_for(current_device(), parse_variant("naive"));
  return [naive](const GemmArgs& args, cudaStream_t stream) { detail::launch(*naive, args, stream); };
}

// The naive kernel, then `value` written over the elements `wrong` of C, in the order given.
GpuBench::Launcher corrupting(std::vector<std::pair<std::int64_t, std::int64_t>> wrong, float value) {
  const GpuBench::Launcher naive = naive_candidate();
  return [naive, wrong, value](const GemmArgs& args, cudaStream_t stream) {
    naive(args, stream);
    for (const auto& [row, col] : wrong)
      cuda_ok(cudaMemcpyAsync(args.C + row * args.ldc + col, &value, sizeof value,
                              cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync of a wrong element");
  };
}

std::string where(std::int64_t row, std::int64_t col) {
  return "first C[" + std::to_string(row) + "][" + std::to_string(col) + "] = ";
}

// A strided C (whose padding the bench fills with NaN: a check that read it would fail every
// candidate), one row, one column.
class GpuBenchVerifies : public ::testing::TestWithParam<Problem> {};

TEST_P(GpuBenchVerifies, ARightCandidateThroughItsCompiledVariantAndAsALaunch) {
  TILEMM_REQUIRE_DEVICE();
  const Problem p = GetParam();
  GpuBench bench(current_device(), p);
  const Variant naive = parse_variant("naive");
  const CheckResult compiled = bench.verify(naive, detail::compile_variant(naive, current_device().arch()));
  EXPECT_EQ(compiled.status, CandidateStatus::ok) << compiled.reason;
  const CheckResult launched = bench.verify_launch(naive_candidate());
  EXPECT_EQ(launched.status, CandidateStatus::ok) << launched.reason;
  EXPECT_EQ(launched.reason, "");
}

TEST_P(GpuBenchVerifies, WrongElementsAreCountedAndTheFirstIsNamedWhicheverWasWrittenFirst) {
  TILEMM_REQUIRE_DEVICE();
  const Problem p = GetParam();
  GpuBench bench(current_device(), p);
  // The later element is written first: the report must still name the earlier one.
  const std::pair<std::int64_t, std::int64_t> late{p.M - 1, p.N - 1}, early{p.M / 2, p.N / 2};
  ASSERT_NE(late, early);
  const CheckResult r = bench.verify_launch(corrupting({late, early}, 1000.0f));
  EXPECT_EQ(r.status, CandidateStatus::wrong_result);
  const std::string expected = "2 of " + std::to_string(p.M * p.N) + " elements wrong, " +
                               where(early.first, early.second) + "1000.000000, reference ";
  EXPECT_EQ(r.reason.rfind(expected, 0), 0u) << r.reason << "\nexpected to start with " << expected;
  // The bench stays usable: the next candidate is checked on its own.
  EXPECT_EQ(bench.verify_launch(naive_candidate()).status, CandidateStatus::ok);
}

TEST_P(GpuBenchVerifies, ANaNIsWrong) {
  TILEMM_REQUIRE_DEVICE();
  const Problem p = GetParam();
  GpuBench bench(current_device(), p);
  const std::int64_t row = p.M - 1, col = p.N / 3;
  const CheckResult r = bench.verify_launch(corrupting({{row, col}}, std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(r.status, CandidateStatus::wrong_result);
  EXPECT_EQ(r.reason.rfind("1 of " + std::to_string(p.M * p.N) + " elements wrong, " + where(row, col) + "nan", 0), 0u)
      << r.reason;
}

TEST_P(GpuBenchVerifies, ACandidateThatWritesNothingLeavesEveryElementWrong) {
  TILEMM_REQUIRE_DEVICE();
  const Problem p = GetParam();
  GpuBench bench(current_device(), p);
  const CheckResult r = bench.verify_launch([](const GemmArgs&, cudaStream_t) {});
  EXPECT_EQ(r.status, CandidateStatus::wrong_result);
  const std::string total = std::to_string(p.M * p.N);
  EXPECT_EQ(r.reason.rfind(total + " of " + total + " elements wrong, " + where(0, 0), 0), 0u) << r.reason;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GpuBenchVerifies,
                         ::testing::Values(padded(37, 45, 29, 3, 5, 7), padded(1, 300, 77, 0, 0, 2),
                                           padded(300, 1, 77, 1, 3, 4)),
                         [](const ::testing::TestParamInfo<Problem>& shape) {
                           const Problem& p = shape.param;
                           return p.M == 1 ? std::string("OneRow")
                                           : p.N == 1 ? std::string("OneColumn") : std::string("StridedC");
                         });

// The comparison kernel on hand-made buffers: each element is just inside or just outside
// |C - reference| <= unit magnitude + 1e-30, with unit = 2^-10.
TEST(CountOutsideBound, CountsJustOutsideAndNaNAndInfinityButNotJustInsideOrThePadding) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  const float u = std::ldexp(1.0f, -10);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Element {
    float reference, magnitude, c;
    bool outside;
  };
  const std::vector<Element> elements = {
      {0.0f, 1.0f, u, false},                                  // on the bound
      {0.0f, 1.0f, std::nextafter(u, inf), true},              // one ulp above it
      {0.5f, 1.0f, 0.5f - u, false},                           // on it, below the reference
      {0.5f, 1.0f, std::nextafter(0.5f - u, -inf), true},      // one ulp beyond
      {1.0f, 0.0f, 1.0f, false},                               // exact, no magnitude
      {1.0f, 0.0f, std::nextafter(1.0f, 2.0f), true},          // any error with no magnitude
      {0.0f, 1.0f, nan, true},
      {0.0f, 1.0f, inf, true},
      {0.0f, 1.0f, -inf, true},
      {0.0f, std::ldexp(1.0f, 20), 1000.0f, false},            // the magnitude scales the bound
      {0.0f, 1.0f, -u, false},
      {0.0f, 1.0f, -std::nextafter(u, inf), true},
  };
  const std::int64_t M = 3, N = 4, ldc = 6;
  ASSERT_EQ(elements.size(), static_cast<std::size_t>(M * N));
  std::vector<float> reference, magnitude, c(static_cast<std::size_t>(M * ldc), nan);  // NaN padding
  for (std::int64_t i = 0; i < M * N; ++i) {
    const Element& e = elements[static_cast<std::size_t>(i)];
    reference.push_back(e.reference);
    magnitude.push_back(e.magnitude);
    c[static_cast<std::size_t>(i / N * ldc + i % N)] = e.c;
  }
  DeviceBuffer d_reference(reference.size()), d_magnitude(magnitude.size()), d_c(c.size()), d_result(4);
  d_reference.upload(reference);
  d_magnitude.upload(magnitude);
  auto* result = static_cast<detail::OutsideBound*>(static_cast<void*>(d_result.get()));
  const auto check = [&] {
    d_c.upload(c);
    detail::count_outside_bound(device, M, N, d_c.get(), ldc, d_reference.get(), d_magnitude.get(),
                                static_cast<double>(u), result, nullptr);
    detail::OutsideBound out;
    cuda_ok(cudaMemcpy(&out, result, sizeof out, cudaMemcpyDeviceToHost), "download");
    return out;
  };

  std::uint64_t outside = 0, first = ~std::uint64_t{0};
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].outside) outside += 1, first = std::min<std::uint64_t>(first, i);
  detail::OutsideBound out = check();
  EXPECT_EQ(out.count, outside);
  EXPECT_EQ(out.first, first);

  // Each call starts from zero: with all but the last one outside element put right, that one
  // is the first.
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].outside) last = i;
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i].outside && i != last)
      c[static_cast<std::size_t>(static_cast<std::int64_t>(i) / N * ldc + static_cast<std::int64_t>(i) % N)] =
          elements[i].reference;
  out = check();
  EXPECT_EQ(out.count, 1u);
  EXPECT_EQ(out.first, last);

  c[static_cast<std::size_t>(static_cast<std::int64_t>(last) / N * ldc + static_cast<std::int64_t>(last) % N)] =
      elements[last].reference;
  out = check();
  EXPECT_EQ(out.count, 0u);
  EXPECT_EQ(out.first, ~std::uint64_t{0});
}

// More rows than one grid holds (65535 blocks of 8 rows): the kernel's row loop reaches them.
TEST(CountOutsideBound, ReachesRowsBeyondTheGridsHeight) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = std::int64_t{65535} * 8 * 2 + 3, N = 1, ldc = 2;
  std::vector<float> zeros(static_cast<std::size_t>(M), 0.0f), ones(static_cast<std::size_t>(M), 1.0f);
  std::vector<float> c(static_cast<std::size_t>(M * ldc), 0.0f);
  c[static_cast<std::size_t>((M - 1) * ldc)] = 1.0f;  // the last row
  DeviceBuffer d_reference(zeros.size()), d_magnitude(ones.size()), d_c(c.size()), d_result(4);
  d_reference.upload(zeros);
  d_magnitude.upload(ones);
  d_c.upload(c);
  auto* result = static_cast<detail::OutsideBound*>(static_cast<void*>(d_result.get()));
  detail::count_outside_bound(current_device(), M, N, d_c.get(), ldc, d_reference.get(),
                              d_magnitude.get(), 1e-3, result, nullptr);
  detail::OutsideBound out;
  cuda_ok(cudaMemcpy(&out, result, sizeof out, cudaMemcpyDeviceToHost), "download");
  EXPECT_EQ(out.count, 1u);
  EXPECT_EQ(out.first, static_cast<std::uint64_t>(M - 1));
}

TEST(FillUniform, DrawsUniformlyFromMinusOneToOneRepeatablyPerSeedAndWritesOnlyCount) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  // More elements than the fill's grid has threads, so that its loop takes further passes.
  const std::size_t count = (std::size_t{1} << 24) + 12345, slack = 5;
  const float sentinel = 7.0f;
  const std::uint64_t seed = testing::fresh_seed();
  const auto draw = [&](std::uint64_t s) {
    DeviceBuffer d(count + slack);
    d.upload(std::vector<float>(count + slack, sentinel));
    detail::fill_uniform(device, d.get(), count, s, nullptr);
    return d.download();
  };
  const std::vector<float> x = draw(seed);
  double sum = 0, squares = 0;
  std::size_t outside = 0;
  std::set<float> distinct;
  for (std::size_t i = 0; i < count; ++i) {
    if (!(x[i] >= -1.0f && x[i] < 1.0f)) ++outside;
    sum += x[i];
    squares += static_cast<double>(x[i]) * x[i];
    if (i < 100000) distinct.insert(x[i]);
  }
  EXPECT_EQ(outside, 0u) << "seed " << seed;
  for (std::size_t i = count; i < count + slack; ++i) EXPECT_EQ(x[i], sentinel) << i;
  const double n = static_cast<double>(count);
  // Mean 0 and mean square 1/3, each with a standard error below 1.5e-4 here.
  EXPECT_NEAR(sum / n, 0.0, 2e-3) << "seed " << seed;
  EXPECT_NEAR(squares / n, 1.0 / 3.0, 2e-3) << "seed " << seed;
  EXPECT_GT(distinct.size(), 99000u) << "seed " << seed;  // 2^24 values: few repeats in 10^5

  EXPECT_EQ(draw(seed), x) << "seed " << seed;
  const std::vector<float> other = draw(seed + 1);
  std::size_t same = 0;
  for (std::size_t i = 0; i < count; ++i) same += other[i] == x[i];
  EXPECT_LT(same, count / 1000) << "seed " << seed;
}

// The reference is the naive kernel's C bit for bit, and the magnitude is the naive kernel's C
// on |A| and |B|: the bound the tuner checks against is the one it always was.
TEST(ReferenceProduct, IsTheNaiveKernelsResultOnAAndBAndOnTheirAbsoluteValues) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  const std::int64_t M = 70, N = 33, K = 300, lda = K + 3, ldb = N + 2;
  DeviceBuffer a(static_cast<std::size_t>(M * lda)), b(static_cast<std::size_t>(K * ldb));
  const std::uint64_t seed = testing::fresh_seed();
  detail::fill_uniform(device, a.get(), static_cast<std::size_t>(M * lda), seed, nullptr);
  detail::fill_uniform(device, b.get(), static_cast<std::size_t>(K * ldb), seed + 1, nullptr);
  DeviceBuffer reference(static_cast<std::size_t>(M * N)), magnitude(static_cast<std::size_t>(M * N));
  detail::reference_product(device, M, N, K, a.get(), lda, b.get(), ldb, reference.get(),
                            magnitude.get(), nullptr);

  const detail::LoadedKernel& naive = detail::kernel_for(device, parse_variant("naive"));
  const auto naive_c = [&](const DeviceBuffer& A, const DeviceBuffer& B) {
    DeviceBuffer c(static_cast<std::size_t>(M * N));
    GemmArgs args = testing::dense_args(M, N, K, 1.0f, A.get(), B.get(), 0.0f, c.get());
    args.lda = lda;
    args.ldb = ldb;
    detail::launch(naive, args, nullptr);
    return c.download();
  };
  EXPECT_EQ(reference.download(), naive_c(a, b)) << "seed " << seed;

  auto abs_a = a.download(), abs_b = b.download();
  for (auto& v : abs_a) v = std::fabs(v);
  for (auto& v : abs_b) v = std::fabs(v);
  a.upload(abs_a);
  b.upload(abs_b);
  EXPECT_EQ(magnitude.download(), naive_c(a, b)) << "seed " << seed;
}

// More rows than one grid holds (65535 blocks of 16 rows): the kernel's row loop reaches them.
TEST(ReferenceProduct, ReachesRowsBeyondTheGridsHeight) {
  TILEMM_REQUIRE_DEVICE();
  const std::int64_t M = std::int64_t{65535} * 16 + 5, N = 1, K = 2;
  std::vector<float> a(static_cast<std::size_t>(M * K));
  for (std::int64_t i = 0; i < M; ++i) {
    a[static_cast<std::size_t>(i * K)] = static_cast<float>(i % 1000);
    a[static_cast<std::size_t>(i * K + 1)] = -1.0f;
  }
  DeviceBuffer d_a(a.size()), d_b(2), reference(static_cast<std::size_t>(M)), magnitude(static_cast<std::size_t>(M));
  d_a.upload(a);
  d_b.upload({2.0f, 3.0f});
  detail::reference_product(current_device(), M, N, K, d_a.get(), K, d_b.get(), 1, reference.get(),
                            magnitude.get(), nullptr);
  const auto r = reference.download(), m = magnitude.download();
  std::size_t wrong = 0;
  for (std::int64_t i = 0; i < M; ++i) {
    const float x = static_cast<float>(i % 1000);
    wrong += r[static_cast<std::size_t>(i)] != 2.0f * x - 3.0f || m[static_cast<std::size_t>(i)] != 2.0f * x + 3.0f;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(r.back(), 2.0f * static_cast<float>((M - 1) % 1000) - 3.0f);
}

TEST(GpuBench, TimesAVariantAndVerifiesAndTimesARowSplitPlan) {
  TILEMM_REQUIRE_DEVICE();
  const Problem p = Problem::dense(300, 200, 236);
  GpuBench bench(current_device(), p);
  const Variant naive = parse_variant("naive");
  ASSERT_EQ(bench.verify(naive, detail::compile_variant(naive, current_device().arch())).status,
            CandidateStatus::ok);
  const tuner::TimingPlan plan = tuner::timing_plan_from_environment();
  const tuner::TimingResult timed = bench.time(naive, 1e9);
  EXPECT_FALSE(timed.pruned);
  EXPECT_GE(timed.stats.samples, plan.min_samples);
  EXPECT_LE(timed.stats.samples, plan.max_samples);
  EXPECT_GT(timed.stats.median_ms, 0.0);
  EXPECT_LE(timed.stats.min_ms, timed.stats.median_ms);

  tuner::RowSplitPlan split;
  split.core_rows = 256;
  split.core = naive;
  split.rest = naive;
  const CheckResult checked = bench.verify_plan(split);
  EXPECT_EQ(checked.status, CandidateStatus::ok) << checked.reason;
  const tuner::TimingResult plan_timed = bench.time_plan(split, 1e9);
  EXPECT_FALSE(plan_timed.pruned);
  EXPECT_GE(plan_timed.stats.samples, plan.min_samples);
  // Slower than anything could be: given up after the probe, which it reports.
  const tuner::TimingResult given_up = bench.time_plan(split, 0.0);
  EXPECT_TRUE(given_up.pruned);
  EXPECT_EQ(given_up.stats.samples, plan.probe);
}

// The bench times a problem in the mode its working set implies on this device
// (tuner/timing_method.hpp): one set of buffers for a problem within half the L2, rotated sets
// above. Either way verification checks set 0 against the reference.
TEST(GpuBench, TimesEachProblemInTheInputModeItsSizeImplies) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  ASSERT_GT(device.l2_bytes, 0u);
  const Problem small = Problem::dense(300, 200, 236);
  GpuBench warm(device, small);
  EXPECT_EQ(warm.input_mode(), tuner::InputMode::same_buffers);
  EXPECT_EQ(warm.input_sets(), 1u);
  EXPECT_EQ(warm.verify_launch(naive_candidate()).status, CandidateStatus::ok);
  EXPECT_GT(warm.time_launch(naive_candidate(), 1e9).stats.median_ms, 0.0);

  // The smallest square problem whose working set (3 n^2 floats) exceeds half the L2.
  const auto n = static_cast<std::int64_t>(std::sqrt(static_cast<double>(device.l2_bytes) / 24.0)) + 1;
  const Problem large = Problem::square(n);
  ASSERT_GT(tuner::working_set_bytes(large), device.l2_bytes / 2);
  GpuBench cold(device, large);
  EXPECT_EQ(cold.input_mode(), tuner::InputMode::rotated);
  EXPECT_EQ(cold.input_sets(), tuner::input_set_count(large, device.l2_bytes));
  EXPECT_GT(cold.input_sets(), 1u);
  const CheckResult checked = cold.verify_launch(naive_candidate());
  EXPECT_EQ(checked.status, CandidateStatus::ok) << checked.reason;
}

// A same-buffers problem's finalists are timed on rotated inputs too
// (tuner/rotated_finalists.hpp): the bench allocates the rotated sets at the first such timing,
// once, and a rotated problem's bench refuses a same-buffers timing.
TEST(GpuBench, TimesASameBuffersProblemOnRotatedInputsWhenAsked) {
  TILEMM_REQUIRE_DEVICE();
  const DeviceInfo& device = current_device();
  const Problem small = Problem::dense(300, 200, 236);
  GpuBench warm(device, small, tuner::quick_timing_plan());
  ASSERT_EQ(warm.input_mode(), tuner::InputMode::same_buffers);
  EXPECT_EQ(warm.rotated_sets(), 0u);
  const double inf = std::numeric_limits<double>::infinity();
  const tuner::TimingPlan plan = warm.timing_plan();
  EXPECT_GT(warm.time_prepared_in_mode("naive", naive_candidate(), plan, inf,
                                       tuner::InputMode::same_buffers).stats.median_ms, 0.0);
  EXPECT_EQ(warm.rotated_sets(), 0u);
  for (int i = 0; i < 2; ++i) {
    const tuner::TimingResult r = warm.time_prepared_in_mode("naive", naive_candidate(), plan, inf,
                                                             tuner::InputMode::rotated);
    EXPECT_GT(r.stats.median_ms, 0.0);
    EXPECT_EQ(warm.rotated_sets(), tuner::rotated_set_count(small, device.l2_bytes));
  }
  EXPECT_GT(warm.rotated_sets(), 1u);
  EXPECT_EQ(warm.input_sets(), 1u);  // the same-buffers set, which verification still checks
  EXPECT_EQ(warm.verify_launch(naive_candidate()).status, CandidateStatus::ok);

  const auto n = static_cast<std::int64_t>(std::sqrt(static_cast<double>(device.l2_bytes) / 24.0)) + 1;
  GpuBench cold(device, Problem::square(n), tuner::quick_timing_plan());
  ASSERT_EQ(cold.input_mode(), tuner::InputMode::rotated);
  EXPECT_THROW(cold.time_prepared_in_mode("naive", naive_candidate(), plan, inf,
                                          tuner::InputMode::same_buffers),
               Error);
}

TEST(StreamHold, KeepsItsStreamWaitingWhileTheBatchIsEnqueuedThenLetsItRun) {
  TILEMM_REQUIRE_DEVICE();
  cudaStream_t stream = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t enqueued = nullptr;
  cuda_ok(cudaEventCreate(&enqueued), "cudaEventCreate");
  detail::StreamHold hold(current_device());
  for (int batch = 0; batch < 3; ++batch) {  // each batch takes a new ticket
    cudaError_t while_held = cudaSuccess;
    hold.run_held(stream, [&] {
      cuda_ok(cudaEventRecord(enqueued, stream), "cudaEventRecord");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      while_held = cudaEventQuery(enqueued);
    });
    EXPECT_EQ(while_held, cudaErrorNotReady) << "batch " << batch << ": the stream ran on while held";
    cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    EXPECT_EQ(cudaEventQuery(enqueued), cudaSuccess);
  }
  cudaEventDestroy(enqueued);
  cudaStreamDestroy(stream);
}

TEST(StreamHold, AHoldNeverReleasedEndsByItselfAfterItsLongest) {
  TILEMM_REQUIRE_DEVICE();
  void* flag = nullptr;
  cuda_ok(cudaHostAlloc(&flag, sizeof(unsigned), cudaHostAllocMapped), "cudaHostAlloc");
  *static_cast<unsigned*>(flag) = 0;
  void* on_device = nullptr;
  cuda_ok(cudaHostGetDevicePointer(&on_device, flag, 0), "cudaHostGetDevicePointer");
  const auto start = std::chrono::steady_clock::now();
  detail::hold_stream(current_device(), static_cast<const unsigned*>(on_device), 1, 30.0, nullptr);
  cuda_ok(cudaDeviceSynchronize(), "the hold");
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(ms, 30.0);
  EXPECT_LT(ms, 5000.0) << "the hold did not end by itself";
  cudaFreeHost(flag);
}

// With TILEMM_LOG=debug a bench logs its input mode and how long its setup took, step by step. The level is read
// once per process, so the test runs the child below in a process of its own.
TEST(GpuBench, DebugLogBreaksTheSetupDown) {
  TILEMM_REQUIRE_DEVICE();
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  const testing::ProgramOutput out = testing::run_command(
      std::string("TILEMM_LOG=debug '") + self +
      "' --gtest_also_run_disabled_tests --gtest_filter=GpuBench.DISABLED_ConstructsOneBench 2>&1");
  EXPECT_EQ(out.code, 0) << out.text;
  for (const char* part : {"tilemm: debug: bench setup for 300x200x236: inputs same buffers (working set ",
                           "1 input sets of ", "allocation ", "random fill ", "reference "})
    EXPECT_NE(out.text.find(part), std::string::npos) << part << "\n" << out.text;
}

TEST(GpuBench, DISABLED_ConstructsOneBench) {
  TILEMM_REQUIRE_DEVICE();
  GpuBench bench(current_device(), Problem::dense(300, 200, 236));
  EXPECT_EQ(bench.verify_launch(naive_candidate()).status, CandidateStatus::ok);
}

}  // namespace
}  // namespace tilemm
