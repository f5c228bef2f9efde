// The vendor providers' candidates on the GPU (cuBLASLt's algorithms and cuBLAS's cublasSgemm):
// each one listed is checked against the float64 reference on shapes with odd leading dimensions,
// at both compute types; a stored winner of each provider serves a new process with no NVRTC
// compile, no tuning and no heuristic query; with TILEMM_VENDOR=off the same stored winner is not
// served (the shape is tuned again). Skips without a GPU, or without the vendor library.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <sys/wait.h>
#include <thread>

#include "candidate_provider.hpp"
#include "candidate_warm_up.hpp"
#include "cublas_library.hpp"
#include "cublas_provider.hpp"
#include "cublaslt_library.hpp"
#include "gemm_check.hpp"
#include "gpu_bench.hpp"
#include "gpu_test_support.hpp"
#include "internal_stream.hpp"
#include "temp_dir.hpp"
#include "tilemm/tilemm.hpp"
#include "tuned_here_entry.hpp"
#include "tuning_store.hpp"

namespace tilemm {
namespace {

#define REQUIRE_CUBLASLT()                                                              \
  do {                                                                                  \
    TILEMM_REQUIRE_DEVICE();                                                            \
    if (detail::cublaslt() == nullptr) GTEST_SKIP() << "cuBLASLt could not be loaded"; \
  } while (0)

#define REQUIRE_CUBLAS()                                                            \
  do {                                                                              \
    TILEMM_REQUIRE_DEVICE();                                                        \
    if (detail::cublas() == nullptr) GTEST_SKIP() << "cuBLAS could not be loaded"; \
  } while (0)

detail::CandidateProvider& provider(const char* prefix) {
  detail::CandidateProvider* p = detail::provider_of(std::string(prefix) + "_");
  if (p == nullptr) throw std::runtime_error(std::string("no provider ") + prefix + " registered");
  return *p;
}

struct Strided {
  std::int64_t M, N, K, lda, ldb, ldc;
};

// Every candidate `vendor` lists for each shape and precision, run on it and checked; returns how
// many ran.
int check_every_listed_candidate(detail::CandidateProvider& vendor) {
  const DeviceInfo& device = current_device();
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("shapes and data from seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dim(1, 700), pad(0, 7);
  // 3x339x412 at these leading dimensions lists a split-K algorithm that refuses a call without
  // a workspace as not supported.
  std::vector<Strided> shapes = {{88, 24, 5367, 5367, 24, 24},
                                 {129, 257, 77, 81, 261, 259},
                                 {3, 339, 412, 413, 346, 344}};
  for (int i = 0; i < 3; ++i) {
    const std::int64_t M = dim(rng), N = dim(rng), K = dim(rng);
    shapes.push_back({M, N, K, K + 1 + 2 * pad(rng), N + 1 + 2 * pad(rng), N + 2 * pad(rng) + 1});
  }
  int checked = 0;
  for (const Precision precision : {Precision::highest, Precision::medium}) {
    for (const auto& s : shapes) {
      const float alpha = 1.25f, beta = -0.5f;
      const auto a = testing::random_matrix(static_cast<std::size_t>(s.M * s.lda), rng);
      const auto b = testing::random_matrix(static_cast<std::size_t>(s.K * s.ldb), rng);
      const auto c0 = testing::random_matrix(static_cast<std::size_t>(s.M * s.ldc), rng);
      const auto ref = testing::reference_gemm(s.M, s.N, s.K, alpha, a, s.lda, b, s.ldb, beta, c0, s.ldc);
      testing::DeviceBuffer A(a.size()), B(b.size()), C(c0.size());
      A.upload(a);
      B.upload(b);
      GemmArgs args{s.M, s.N, s.K, alpha, A.get(), s.lda, B.get(), s.ldb, beta, C.get(), s.ldc};
      Problem problem = args.problem();
      problem.precision = precision;
      const auto names = vendor.candidates(device, problem);
      EXPECT_FALSE(names.empty()) << s.M << "x" << s.N << "x" << s.K;
      for (const auto& name : names) {
        const std::string why = vendor.why_cannot_run(name, device, problem);
        if (!why.empty()) continue;
        C.upload(c0);
        const std::string where = name + " on " + std::to_string(s.M) + "x" + std::to_string(s.N) +
                                  "x" + std::to_string(s.K) + " lda " + std::to_string(s.lda) +
                                  " ldb " + std::to_string(s.ldb) + " ldc " + std::to_string(s.ldc);
        // A candidate the provider listed as able to run must run: a throw is this candidate's
        // failure, named with its shape, and the others are still checked.
        try {
          vendor.prepare(name, device).enqueue(args, nullptr);
          testing::cuda_ok(cudaDeviceSynchronize(), name.c_str());
        } catch (const std::exception& e) {
          ADD_FAILURE() << where << " threw: " << e.what();
          continue;
        }
        const auto out = C.download();
        std::int64_t wrong = 0;
        for (std::int64_t r = 0; r < s.M; ++r)
          for (std::int64_t j = 0; j < s.N; ++j) {
            const double got = out[static_cast<std::size_t>(r * s.ldc + j)];
            const std::size_t at = static_cast<std::size_t>(r * s.N + j);
            const Precision runs = testing::candidate_precision(name);
            wrong += !(std::fabs(got - ref.value[at]) <=
                       testing::tolerance(s.K, ref.magnitude[at], runs));
          }
        // Padding between rows of C is never written.
        for (std::int64_t r = 0; r < s.M && s.ldc > s.N; ++r)
          wrong += out[static_cast<std::size_t>(r * s.ldc + s.N)] !=
                   c0[static_cast<std::size_t>(r * s.ldc + s.N)];
        EXPECT_EQ(wrong, 0) << where;
        ++checked;
      }
    }
  }
  return checked;
}

TEST(VendorCandidates, EveryListedAlgorithmMatchesTheFloat64ReferenceWithOddLeadingDimensions) {
  REQUIRE_CUBLASLT();
  EXPECT_GT(check_every_listed_candidate(provider("cublaslt")), 10);
}

TEST(VendorCandidates, CublasSgemmMatchesTheFloat64ReferenceWithOddLeadingDimensions) {
  REQUIRE_CUBLAS();
  // Two math modes for medium, one for highest, on each of the six shapes.
  EXPECT_EQ(check_every_listed_candidate(provider("cublas")), 18);
}

// Each call its own dense problem on fresh data: long K, where cuBLAS splits K through its
// workspace, so calls that ran at once on one workspace would corrupt each other's sums.
class CublasWorkspaces : public ::testing::Test {
 protected:
  static constexpr std::int64_t M = 24, N = 40, K = 7001;

  void SetUp() override {
    REQUIRE_CUBLAS();
    name_ = provider("cublas").candidates(current_device(), Problem::dense(M, N, K)).back();
    sgemm_ = &provider("cublas").prepare(name_, current_device());
    seed_ = testing::fresh_seed();
    rng_.seed(seed_);
  }
  std::unique_ptr<testing::DenseProblem> problem() {
    return std::make_unique<testing::DenseProblem>(M, N, K, 1.0f, 0.0f, rng_);
  }
  void enqueue(const testing::DenseProblem& p, cudaStream_t stream) const {
    sgemm_->enqueue(p.args(), stream);
  }
  // Outputs outside the reference's bound; the caller has synchronized.
  static std::int64_t wrong(const testing::DenseProblem& p) { return p.check(p.output()).wrong; }
  std::size_t kept() const { return detail::cublas_kept_workspaces(current_device().ordinal); }

  std::string name_;
  const detail::PreparedCandidate* sgemm_ = nullptr;
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

// Calls on more streams than keep a workspace (kCublasKeptWorkspaces), enqueued together before
// any is waited for: the first streams keep one each, the rest take theirs from the pool.
TEST_F(CublasWorkspaces, ManyStreamsAtOnceKeepThemApart) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const std::size_t before = kept();
  const std::size_t streams = detail::kCublasKeptWorkspaces + 3;
  std::vector<std::unique_ptr<testing::DenseProblem>> calls;
  std::vector<cudaStream_t> on(streams);
  for (auto& stream : on) {
    calls.push_back(problem());
    testing::cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  for (int round = 0; round < 3; ++round)
    for (std::size_t i = 0; i < streams; ++i) enqueue(*calls[i], on[i]);
  testing::cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (std::size_t i = 0; i < streams; ++i) {
    EXPECT_EQ(wrong(*calls[i]), 0) << name_ << " on stream " << i;
    testing::cuda_ok(cudaStreamDestroy(on[i]), "cudaStreamDestroy");
  }
  EXPECT_EQ(kept(), detail::kCublasKeptWorkspaces) << "kept before: " << before;
}

// cudaStreamPerThread is one handle for a different stream in each thread: threads calling on it
// at once must not share a workspace, so each new thread's stream keeps one while any are left.
TEST_F(CublasWorkspaces, EachThreadsPerThreadStreamKeepsItsOwn) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const std::size_t before = kept();
  constexpr std::size_t kThreads = 3;
  std::vector<std::unique_ptr<testing::DenseProblem>> calls;
  for (std::size_t i = 0; i < kThreads; ++i) calls.push_back(problem());
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        for (int round = 0; round < 3; ++round) enqueue(*calls[i], cudaStreamPerThread);
        testing::cuda_ok(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
      } catch (const std::exception& e) {
        failures[i] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < kThreads; ++i) {
    EXPECT_EQ(failures[i], "") << "thread " << i;
    EXPECT_EQ(wrong(*calls[i]), 0) << name_ << " on thread " << i << "'s per-thread stream";
  }
  EXPECT_EQ(kept(), std::min(before + kThreads, detail::kCublasKeptWorkspaces));
}

// A stream created after another was destroyed with calls still pending may get its handle; it
// must not get its workspace while those calls may still run.
TEST_F(CublasWorkspaces, AStreamAfterADestroyedOneKeepsItsOwn) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const auto first = problem(), second = problem();
  const std::size_t before = kept();
  cudaStream_t stream = nullptr;
  testing::cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (int round = 0; round < 3; ++round) enqueue(*first, stream);
  testing::cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  testing::cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  for (int round = 0; round < 3; ++round) enqueue(*second, stream);
  testing::cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  testing::cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  EXPECT_EQ(wrong(*first), 0) << name_ << " on the destroyed stream";
  EXPECT_EQ(wrong(*second), 0) << name_ << " on the stream created after it";
  EXPECT_EQ(kept(), std::min(before + 2, detail::kCublasKeptWorkspaces));
}

// A process that tunes shape after shape times the cuBLAS candidate on each tuning's bench stream,
// and runs each cached cuBLAS winner once on a stream of its own before a caller does: those are
// tilemm's streams (internal_stream.hpp), taken again from one tuning to the next, so they keep
// one workspace however many shapes there are, and the application's streams keep theirs.
TEST_F(CublasWorkspaces, TuningShapeAfterShapeLeavesTheKeptWorkspacesToTheApplication) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const std::size_t before = kept();
  const int streams_before = detail::internal_streams_made(current_device().ordinal);
  // ctest runs each test in a process of its own; run with others, the slots may be spent.
  if (before + 2 > detail::kCublasKeptWorkspaces) GTEST_SKIP() << before << " workspaces kept already";
  const tuner::CandidateBench::Launcher launch = [this](const GemmArgs& args, cudaStream_t stream) {
    sgemm_->enqueue(args, stream);
  };
  for (std::size_t i = 0; i < detail::kCublasKeptWorkspaces + 2; ++i) {
    const Problem shape = Problem::dense(M, N + static_cast<std::int64_t>(i), K);
    tuner::GpuBench bench(current_device(), shape);
    const tuner::CheckResult verified = bench.verify_prepared(name_, launch);
    EXPECT_EQ(verified.status, CandidateStatus::ok) << shape.N << ": " << verified.reason;
    detail::warm_up_candidate(current_device(), shape, *sgemm_);
  }
  // The bench's stream and the warm-up's, each made once.
  EXPECT_EQ(detail::internal_streams_made(current_device().ordinal), streams_before + 2);
  const std::size_t after_tuning = kept();
  EXPECT_LE(after_tuning, before + 2);
  // An application's new stream still keeps one.
  const auto call = problem();
  cudaStream_t stream = nullptr;
  testing::cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  enqueue(*call, stream);
  testing::cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  EXPECT_EQ(wrong(*call), 0) << name_ << " on the application's stream";
  EXPECT_EQ(kept(), after_tuning + 1) << "the application's stream keeps no workspace";
  testing::cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

// A call captured into a CUDA graph (global mode, the strictest): a capturing stream's id cannot
// be asked for, so the call takes a pooled workspace, which each launch of the graph allocates.
TEST_F(CublasWorkspaces, ACapturedCallMatchesTheReferenceAtEveryLaunch) {
  SCOPED_TRACE("data from seed " + std::to_string(seed_));
  const auto call = problem();
  cudaStream_t stream = nullptr;
  testing::cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  enqueue(*call, stream);  // the stream keeps a workspace before its capture, if any are left
  testing::cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const std::size_t before = kept();
  testing::cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal),
                   "cudaStreamBeginCapture");
  std::string failure;
  try {
    enqueue(*call, stream);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  ASSERT_EQ(failure, "");
  testing::cuda_ok(ended, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  testing::cuda_ok(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (int launch = 0; launch < 2; ++launch) {
    testing::cuda_ok(cudaMemsetAsync(call->args().C, 0xff, M * N * sizeof(float), stream),
                     "cudaMemsetAsync");  // NaN: a launch that wrote nothing fails the check
    testing::cuda_ok(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    testing::cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    EXPECT_EQ(wrong(*call), 0) << name_ << " at launch " << launch << " of the captured graph";
  }
  EXPECT_EQ(kept(), before) << "a captured call keeps no workspace";
  testing::cuda_ok(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  testing::cuda_ok(cudaGraphDestroy(graph), "cudaGraphDestroy");
  testing::cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

struct Child {
  std::string output;
  bool exited_zero = false;
};

Child run_child(const std::string& env, const std::string& args) {
  const std::string command = env + " " + std::string(TILEMM_DISPATCH_CHILD) + " " + args + " 2>&1";
  Child r;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char line[512];
  while (std::fgets(line, sizeof line, pipe) != nullptr) r.output += line;
  const int status = pclose(pipe);
  r.exited_zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return r;
}

// A stored winner of `vendor` for 88x24x5367 serves a new process with nothing compiled, tuned or
// asked of a heuristic, and is not served with vendor candidates off.
void check_stored_winner_serves_a_new_process(detail::CandidateProvider& vendor) {
  const DeviceInfo& device = current_device();
  const Problem problem = Problem::dense(88, 24, 5367, 4);  // small output, long K
  const auto names = vendor.candidates(device, problem);
  ASSERT_FALSE(names.empty());
  testing::TempDir dir;
  const std::string db = dir.file("tuning.db");
  cache::TuningStore(db).put_all({testing::tuned_here_entry(device, problem, names.front())});
  const std::string cache = "TILEMM_CACHE='" + db + "'";
  const Child served = run_child(cache, "88x24x5367");
  EXPECT_TRUE(served.exited_zero) << served.output;
  EXPECT_NE(served.output.find("shape 88x24x5367 wrong=0"), std::string::npos) << served.output;
  EXPECT_NE(served.output.find("compilations=0 tunings=0 heuristic_queries=0"), std::string::npos)
      << served.output;
  // Vendor candidates off: the stored vendor winner does not serve, the shape is tuned anew.
  const Child own = run_child(cache + " TILEMM_VENDOR=off", "--may-tune 88x24x5367");
  EXPECT_TRUE(own.exited_zero) << own.output;
  EXPECT_NE(own.output.find("tunings=1 heuristic_queries=0"), std::string::npos) << own.output;
}

TEST(VendorCandidates, AStoredVendorWinnerServesANewProcessWithoutCompilesOrHeuristicQueries) {
  REQUIRE_CUBLASLT();
  check_stored_winner_serves_a_new_process(provider("cublaslt"));
}

TEST(VendorCandidates, AStoredCublasWinnerServesANewProcessWithoutCompilesOrHeuristicQueries) {
  REQUIRE_CUBLAS();
  check_stored_winner_serves_a_new_process(provider("cublas"));
}

}  // namespace
}  // namespace tilemm
