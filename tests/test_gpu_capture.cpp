// gemm() under CUDA graph capture (global mode, the strictest): a shape resolved before the capture
// is captured and replays the float64 reference at every launch of the graph, whatever its winner
// (every family that can run the shape, each vendor provider's first candidate, so kernels with
// and without workspaces, extra kernels and clusters); a shape not resolved yet is refused with
// an error that names the capture, and the caller's capture stays usable. Skips without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "candidate_provider.hpp"
#include "gemm_check.hpp"
#include "gpu_test_support.hpp"
#include "shape_key.hpp"
#include "temp_dir.hpp"
#include "tilemm/tilemm.hpp"
#include "tuned_here_entry.hpp"
#include "tuning_store.hpp"

namespace tilemm {
namespace {

// The winners that can serve `problem` here: each family's first variant that can run it, and
// each available vendor provider's first candidate.
std::vector<std::string> one_winner_of_each_kind(const DeviceInfo& device, const Problem& problem) {
  std::vector<std::string> winners;
  for (const std::string& family : family_names())
    for (const Variant& v : variant_space(family))
      if (can_run(v, device, problem)) {
        winners.push_back(variant_name(v));
        break;
      }
  for (detail::CandidateProvider* provider : detail::candidate_providers(problem)) {
    if (!provider->available()) continue;
    const auto names = provider->candidates(device, problem);
    if (!names.empty()) winners.push_back(names.front());
  }
  return winners;
}

class GemmCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    TILEMM_REQUIRE_DEVICE();
    seed_ = testing::fresh_seed();
    rng_.seed(seed_);
    testing::cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // The graph of gemm(`args`) captured on the stream in global mode, or the failure of the call.
  cudaGraphExec_t capture(Context& context, const GemmArgs& args, std::string& failure) {
    testing::cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
                     "cudaStreamBeginCapture");
    try {
      context.gemm(args, stream_);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    cudaGraph_t graph = nullptr;
    testing::cuda_ok(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    testing::cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    testing::cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
    return exec;
  }

  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  cudaStream_t stream_ = nullptr;
};

TEST_F(GemmCapture, AResolvedShapeReplaysTheReferenceAtEveryLaunchWhateverItsWinner) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const DeviceInfo& device = current_device();
  // An aligned shape and one with odd dimensions (an unaligned class: the padded family's copies).
  for (const auto& [M, N, K] : std::vector<std::array<std::int64_t, 3>>{{300, 200, 1000},
                                                                        {97, 203, 1001}}) {
    const float beta = 0.5f;
    testing::DenseProblem call(M, N, K, 1.25f, beta, rng_);
    const Problem problem = call.args().problem();
    const auto winners = one_winner_of_each_kind(device, problem);
    ASSERT_GE(winners.size(), 3u) << dispatch::describe(problem);
    for (const std::string& winner : winners) {
      SCOPED_TRACE(winner + " on " + dispatch::describe(problem));
      testing::TempDir dir;
      cache::TuningStore(dir.file("tuning.db")).put_all({testing::tuned_here_entry(device, problem, winner)});
      ContextSettings settings;
      settings.cache_path = dir.file("tuning.db");
      Context context(settings);
      // Resolved outside the capture: from the cache, nothing tuned.
      const auto warm = call.run([&](const GemmArgs& args) { context.gemm(args, stream_); });
      ASSERT_EQ(call.check(warm).wrong, 0) << call.check(warm).first;
      ASSERT_EQ(context.tunings_run(), 0u);
      std::string failure;
      cudaGraphExec_t exec = capture(context, call.args(), failure);
      ASSERT_EQ(failure, "");
      for (int launch = 0; launch < 2; ++launch) {
        // C back to its initial values (beta reads them), then the graph.
        const auto out = call.run([&](const GemmArgs&) {
          testing::cuda_ok(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
        }, "the captured graph");
        const auto checked = call.check(out);
        EXPECT_EQ(checked.wrong, 0) << "launch " << launch << ": " << checked.first;
      }
      testing::cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    }
  }
}

// Resolving reads the cache, loads a kernel and may tune: none of it can be captured, and in
// global mode any of it would end the caller's capture. The call is refused before any of it,
// under every policy, and the capture goes on.
TEST_F(GemmCapture, AShapeNotResolvedYetIsRefusedAndTheCaptureGoesOn) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  testing::DenseProblem first(64, 48, 40, 1.0f, 0.0f, rng_);
  testing::DenseProblem second(72, 40, 56, 1.0f, 0.0f, rng_);
  testing::TempDir dir;
  ContextSettings settings;
  settings.cache_path = dir.file("tuning.db");
  settings.options.policy = TunePolicy::off;
  Context context(settings);
  context.gemm(first.args(), stream_);  // the process's kernels and pool exist
  testing::cuda_ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  for (const TunePolicy policy : {TunePolicy::off, TunePolicy::tune_on_miss, TunePolicy::background}) {
    SCOPED_TRACE("policy " + std::to_string(static_cast<int>(policy)));
    Options options;
    options.policy = policy;
    testing::cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
                     "cudaStreamBeginCapture");
    std::string refused;
    try {
      context.gemm(second.args(), stream_, options);
    } catch (const InvalidArgument& e) {
      refused = e.what();
    }
    // The capture still works: a resolved shape is captured after the refusal.
    std::string failure;
    try {
      context.gemm(first.args(), stream_, settings.options);
    } catch (const std::exception& e) {
      failure = e.what();
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    testing::cuda_ok(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    EXPECT_NE(refused.find("is capturing a CUDA graph"), std::string::npos) << refused;
    EXPECT_NE(refused.find("72x40x56"), std::string::npos) << refused;
    EXPECT_EQ(failure, "");
    EXPECT_EQ(status, cudaStreamCaptureStatusActive);
    ASSERT_EQ(ended, cudaSuccess) << cudaGetErrorString(ended);
    size_t nodes = 0;
    testing::cuda_ok(cudaGraphGetNodes(graph, nullptr, &nodes), "cudaGraphGetNodes");
    EXPECT_GE(nodes, 1u) << "the resolved shape's kernel is in the graph";
    testing::cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
  }
  EXPECT_EQ(context.tunings_run(), 0u);
  // Outside the capture the refused shape resolves as usual.
  const auto out = second.run([&](const GemmArgs& args) { context.gemm(args, stream_); });
  EXPECT_EQ(second.check(out).wrong, 0) << second.check(out).first;
}

// A BLAS-style call with a transposed operand copies it first. A capture may take the copy only
// where it takes the GEMM over it too: before the call was made once in the process it is
// refused with nothing recorded, and the capture goes on; afterwards the whole call is captured,
// and its graph replays the float64 reference. Batches are asked all before the first is enqueued.
TEST_F(GemmCapture, ATransposedBlasCallIsCapturedOnlyOnceItWasMadeOutsideTheCapture) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const std::int64_t M = 96, N = 80, K = 72;
  const auto a = testing::random_matrix(static_cast<std::size_t>(M * K), rng_);
  const auto b = testing::random_matrix(static_cast<std::size_t>(K * N), rng_);
  std::vector<float> a_transposed(a.size());  // stored K x M
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t k = 0; k < K; ++k) a_transposed[k * M + i] = a[i * K + k];
  const std::vector<float> zeros(static_cast<std::size_t>(M * N), 0.0f);
  const testing::Reference ref = testing::reference_gemm(M, N, K, 1.0f, a, K, b, N, 0.0f, zeros, N);
  testing::DeviceBuffer at(a_transposed.size()), bd(b.size()), c(zeros.size());
  at.upload(a_transposed);
  bd.upload(b);
  testing::TempDir dir;
  ContextSettings settings;
  settings.cache_path = dir.file("tuning.db");
  settings.options.policy = TunePolicy::off;
  Context context(settings);
  const auto call = [&] {
    context.gemm(Layout::row_major, Op::transpose, Op::none, M, N, K, 1.0f, at.get(), M, bd.get(), N, 0.0f,
                 c.get(), N, stream_);
  };
  const auto nodes_of = [&](const std::function<void()>& work, std::string& why) {
    testing::cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    try {
      work();
    } catch (const InvalidArgument& e) {
      why = e.what();
    }
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    testing::cuda_ok(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
    EXPECT_EQ(status, cudaStreamCaptureStatusActive) << "the capture goes on";
    cudaGraph_t g = nullptr;
    testing::cuda_ok(cudaStreamEndCapture(stream_, &g), "cudaStreamEndCapture");
    size_t nodes = 0;
    testing::cuda_ok(cudaGraphGetNodes(g, nullptr, &nodes), "cudaGraphGetNodes");
    testing::cuda_ok(cudaGraphDestroy(g), "cudaGraphDestroy");
    return nodes;
  };
  std::string refused;
  EXPECT_EQ(nodes_of(call, refused), 0u);
  EXPECT_NE(refused.find("copies its transposed operands"), std::string::npos) << refused;
  // Made once outside the capture: captured whole, and the graph computes the product.
  call();
  testing::cuda_ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  testing::cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  call();
  cudaGraph_t graph = nullptr;
  testing::cuda_ok(cudaStreamEndCapture(stream_, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  testing::cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  testing::cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
  testing::cuda_ok(cudaMemset(c.get(), 0xff, zeros.size() * sizeof(float)), "cudaMemset");  // NaN
  testing::cuda_ok(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
  testing::cuda_ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  testing::cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  const std::vector<float> out = c.download();
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i)
    wrong += !(std::isfinite(out[i]) && std::fabs(out[i] - ref.value[i]) <= testing::tolerance(K, ref.magnitude[i]));
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(context.tunings_run(), 0u);
  // Two batches, the second's B one float further (another alignment class, so a key of its
  // own, not resolved yet): refused before the first batch is recorded.
  testing::DeviceBuffer b2(b.size() + 1), c2(2 * zeros.size());
  testing::cuda_ok(cudaMemset(b2.get(), 0, (b.size() + 1) * sizeof(float)), "cudaMemset");
  const auto batches = [&] {
    context.gemm_strided_batched(Layout::row_major, Op::transpose, Op::none, M, N, K, 1.0f, at.get(), M, 0,
                                 b2.get(), N, 1, 0.0f, c2.get(), N, M * N, 2, stream_);
  };
  std::string second;
  EXPECT_EQ(nodes_of(batches, second), 0u);
  EXPECT_NE(second.find("is capturing a CUDA graph"), std::string::npos) << second;
  batches();
  testing::cuda_ok(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  std::string none;
  EXPECT_GE(nodes_of(batches, none), 4u) << none;  // two copies and two GEMMs at least
  EXPECT_EQ(none, "");
}

}  // namespace
}  // namespace tilemm
