// The timing harness that tilemm's benchmarks share: inputs rotated through enough copies to
// exceed the L2 several times (or the same copy every launch), warm-up, and the median of a
// time-based number of runs, each launch timed by the tuner's own loop (tuner/launch_timer.hpp),
// so that every contender is timed under the same conditions as the tuner's candidates.
#pragma once

#include <cuda_runtime_api.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_cuda.hpp"
#include "launch_timer.hpp"
#include "round_orders.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tune_cli.hpp"

namespace tilemm::bench {

// The options every benchmark takes: which shapes (same syntax as tilemm-tune) and how long to
// time each contender.
struct ShapeOptions {
  std::string sizes, shapes;
  double budget_ms;

  ShapeOptions(CLI::App& app, std::string default_sizes, double default_budget_ms)
      : sizes(std::move(default_sizes)), budget_ms(default_budget_ms) {
    app.add_option("--sizes", sizes, "Square sizes N x N x N (default: " + sizes + ")")
        ->option_text("LIST");
    app.add_option("--shapes", shapes, "M x N x K shapes, e.g. 1024x512x256; replace --sizes")
        ->option_text("LIST");
    app.add_option("--ms-per-case", budget_ms,
                   "Timed milliseconds per contender and shape (default: " +
                       std::to_string(static_cast<int>(default_budget_ms)) + ")")
        ->option_text("MS")
        ->check(tool::number_between(1, 600000));
  }
  // --shapes if given, else --sizes; throws std::runtime_error where there is no GPU to run them.
  std::vector<cli::Shape> to_run() const {
    std::vector<cli::Shape> todo;
    if (!sizes.empty() && shapes.empty()) todo = cli::parse_sizes(sizes);
    if (!shapes.empty()) todo = cli::parse_shapes(shapes);
    if (tilemm::device_count() == 0) throw std::runtime_error(tool::no_device("this benchmark needs a GPU"));
    return todo;
  }
};

// The non-empty items of a comma-separated list ("a,,b" is a and b).
inline std::vector<std::string> comma_separated(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Throws tilemm::InvalidArgument naming `option` and can_run's reason unless `v` runs `problem` on
// the current device at its own precision (a tensor-core variant as high or medium).
inline void require_runs(const tilemm::Variant& v, const tilemm::Problem& problem, const char* option) {
  tilemm::Problem at_its_precision = problem;
  at_its_precision.precision = tilemm::precision_of(v);
  if (const tilemm::Verdict verdict = tilemm::can_run(v, tilemm::current_device(), at_its_precision); !verdict)
    throw tilemm::InvalidArgument(option, tilemm::variant_name(v) + " cannot run " +
                                              std::to_string(problem.M) + "x" + std::to_string(problem.N) +
                                              "x" + std::to_string(problem.K) + ": " + verdict.reason);
}

struct Set {
  float *A, *B, *C;
};

class Problem {
 public:
  Problem(std::int64_t m, std::int64_t n, std::int64_t k, std::size_t l2_bytes) : M(m), N(n), K(k) {
    const std::size_t a = static_cast<std::size_t>(M * K), b = static_cast<std::size_t>(K * N),
                      c = static_cast<std::size_t>(M * N);
    const std::size_t bytes = (a + b + c) * sizeof(float);
    std::size_t sets = (4 * l2_bytes + bytes - 1) / bytes;
    sets = std::clamp<std::size_t>(sets, 1, 64);
    sets = std::max<std::size_t>(1, std::min(sets, (std::size_t{3} << 30) / bytes));
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    host_a.resize(a);
    host_b.resize(b);
    for (auto& x : host_a) x = dist(rng);
    for (auto& x : host_b) x = dist(rng);
    for (std::size_t i = 0; i < sets; ++i) {
      Set s{};
      cuda(cudaMalloc(reinterpret_cast<void**>(&s.A), a * sizeof(float)), "cudaMalloc A");
      cuda(cudaMalloc(reinterpret_cast<void**>(&s.B), b * sizeof(float)), "cudaMalloc B");
      cuda(cudaMalloc(reinterpret_cast<void**>(&s.C), c * sizeof(float)), "cudaMalloc C");
      cuda(cudaMemcpy(s.A, host_a.data(), a * sizeof(float), cudaMemcpyHostToDevice), "upload A");
      cuda(cudaMemcpy(s.B, host_b.data(), b * sizeof(float), cudaMemcpyHostToDevice), "upload B");
      sets_.push_back(s);
    }
  }
  ~Problem() {
    for (auto& s : sets_) {
      cudaFree(s.A);
      cudaFree(s.B);
      cudaFree(s.C);
    }
  }
  const Set& set(std::size_t i) const { return sets_[i % sets_.size()]; }
  std::size_t sets() const { return sets_.size(); }
  std::vector<float> download_c0() const {
    std::vector<float> c(static_cast<std::size_t>(M * N));
    cuda(cudaMemcpy(c.data(), sets_[0].C, c.size() * sizeof(float), cudaMemcpyDeviceToHost), "download C");
    return c;
  }
  const std::int64_t M, N, K;
  std::vector<float> host_a, host_b;

 private:
  std::vector<Set> sets_;
};

// Rows [row0, row0 + rows) of the dense row-major problem in `s` (all of it by default): A and C
// start `row0` rows further down, alpha 1, beta 0.
inline GemmArgs dense_args(const Problem& p, const Set& s, std::int64_t row0 = 0,
                           std::int64_t rows = -1) {
  GemmArgs a;
  a.M = rows < 0 ? p.M : rows;
  a.N = p.N;
  a.K = p.K;
  a.A = s.A + row0 * p.K;
  a.lda = p.K;
  a.B = s.B;
  a.ldb = p.N;
  a.C = s.C + row0 * p.N;
  a.ldc = p.N;
  return a;
}

// Which inputs the timed launches get: the copies in turn, so that every launch reads A and B
// from HBM as a call on fresh data would (L2-cold); or the first copy every time, so that what fits
// in the L2 stays there, as in a loop over the same buffers (L2-warm).
enum class Inputs { rotated, same };
inline const char* to_string(Inputs inputs) { return inputs == Inputs::rotated ? "rotated" : "same"; }

// The input sets a contender's launches take in turn: the copies one after the other (rotated),
// or the first every time (same).
inline std::function<const Set&()> input_sets(const Problem& p, Inputs inputs) {
  auto next = std::make_shared<std::size_t>(0);
  return [&p, inputs, next]() -> const Set& {
    return p.set(inputs == Inputs::rotated ? (*next)++ : 0);
  };
}

// The tuner's timing loop (tuner/launch_timer.hpp) for the current device, made on first use:
// benchmarks time their contenders exactly as the tuner times candidates.
inline tuner::LaunchTimer& launch_timer() {
  static tuner::LaunchTimer timer(current_device());
  return timer;
}

// `runs` launches of `launch` on the default stream, each between its own pair of CUDA events
// (launch_timer()); their milliseconds are appended to `samples`.
inline void time_launches(const std::function<void(const Set&)>& launch,
                          const std::function<const Set&()>& next_set, int runs,
                          std::vector<float>& samples) {
  const std::vector<float> ms = launch_timer().time(nullptr, runs, [&](int) { launch(next_set()); });
  samples.insert(samples.end(), ms.begin(), ms.end());
}

// Warms `launch` up with 3 launches, then returns the mean milliseconds of 3 more: what sets how
// many launches a time budget holds.
inline float probe_ms_per_launch(const std::function<void(const Set&)>& launch,
                                 const std::function<const Set&()>& next_set) {
  std::vector<float> ms;
  time_launches(launch, next_set, 3, ms);  // warm-up
  ms.clear();
  time_launches(launch, next_set, 3, ms);
  return std::max((ms[0] + ms[1] + ms[2]) / 3.0f, 1e-3f);
}

inline double median(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Median milliseconds of `launch(set)` over a time-based number of runs.
inline double time_ms(const Problem& p, const std::function<void(const Set&)>& launch, double budget_ms,
                      Inputs inputs = Inputs::rotated) {
  const auto next_set = input_sets(p, inputs);
  const float per_launch = probe_ms_per_launch(launch, next_set);
  const int runs = std::clamp(static_cast<int>(budget_ms / per_launch), 20, 1000);
  std::vector<float> ms;
  time_launches(launch, next_set, runs, ms);
  return median(std::move(ms));
}

// Medians of several contenders timed in turn, round after round, each round giving every
// contender an equal share of the budget: a drift of the GPU's clock (power, heat) over the run
// then falls on all of them alike. The rounds take the contenders in balanced_round_orders, so
// that none is always timed right after the same one (after a heavy tensor-core kernel the clock
// starts lower). CUDA events around each launch; each contender's launches walk the input sets on
// from where its last round stopped.
inline std::vector<double> time_ms_interleaved(
    const Problem& p, const std::vector<std::function<void(const Set&)>>& launches,
    double budget_ms, Inputs inputs = Inputs::rotated) {
  const std::size_t n = launches.size();
  const auto orders = balanced_round_orders(static_cast<int>(n));
  const int rounds = static_cast<int>(orders.size());
  // At least 10 launches per contender over all rounds, for a median.
  const int min_per_round = (10 + rounds - 1) / rounds;
  std::vector<std::function<const Set&()>> next_set(n);
  std::vector<int> per_round(n);
  for (std::size_t c = 0; c < n; ++c) {
    next_set[c] = input_sets(p, inputs);
    const float per_launch = probe_ms_per_launch(launches[c], next_set[c]);
    per_round[c] = std::clamp(static_cast<int>(budget_ms / rounds / per_launch), min_per_round, 1000);
  }
  std::vector<std::vector<float>> samples(n);
  for (const auto& order : orders)
    for (const int c : order) time_launches(launches[c], next_set[c], per_round[c], samples[c]);
  std::vector<double> medians(n);
  for (std::size_t c = 0; c < n; ++c) medians[c] = median(std::move(samples[c]));
  return medians;
}

// Milliseconds per call of several contenders called back to back as an application calls them:
// batches of calls between two events on the default stream, nothing held, the stream drained
// between batches (LaunchTimer::time_calls). Where a contender's host side (its dispatch, the
// launch) takes longer than its kernel, the GPU waits for each call and the time per call is that
// of the host; otherwise it is the kernel's. A batch holds up to 20 calls, fewer where the slowest
// contender's call is long (the host's side is then lost in it), the same number for every
// contender. The rounds interleave the contenders as time_ms_interleaved's do; each contender's
// median over its batches is returned.
inline std::vector<double> time_ms_per_call_interleaved(
    const Problem& p, const std::vector<std::function<void(const Set&)>>& launches,
    double budget_ms, Inputs inputs = Inputs::rotated) {
  constexpr int kProbeCalls = 3, kMostCallsPerBatch = 20;
  constexpr double kBatchMs = 0.5;  // what sets a batch's calls: well above any host side's time
  const std::size_t n = launches.size();
  if (n == 0) return {};
  const auto orders = balanced_round_orders(static_cast<int>(n));
  const int rounds = static_cast<int>(orders.size());
  const int min_batches_per_round = (5 + rounds - 1) / rounds;  // 5 batches at least, for a median
  std::vector<std::function<const Set&()>> next_set(n);
  std::vector<std::vector<float>> samples(n);
  const auto batch = [&](std::size_t c, int calls) {
    const float ms =
        launch_timer().time_calls(nullptr, calls, [&](int) { launches[c](next_set[c]()); });
    return std::max(ms, 1e-4f);
  };
  std::vector<float> probe(n);
  for (std::size_t c = 0; c < n; ++c) {
    next_set[c] = input_sets(p, inputs);
    batch(c, 1);  // warm-up
    probe[c] = batch(c, kProbeCalls);
  }
  const float slowest = *std::max_element(probe.begin(), probe.end());
  const int calls =
      std::clamp(static_cast<int>(kBatchMs / double(slowest)), kProbeCalls, kMostCallsPerBatch);
  std::vector<int> per_round(n);
  for (std::size_t c = 0; c < n; ++c)
    per_round[c] = std::clamp(static_cast<int>(budget_ms / rounds / (double(probe[c]) * calls)),
                              min_batches_per_round, 100);
  for (const auto& order : orders)
    for (const int c : order)
      for (int b = 0; b < per_round[c]; ++b) samples[c].push_back(batch(c, calls));
  std::vector<double> medians(n);
  for (std::size_t c = 0; c < n; ++c) medians[c] = median(std::move(samples[c]));
  return medians;
}

}  // namespace tilemm::bench
