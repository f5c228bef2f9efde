// tilemm-background-bench: TunePolicy::background under an application's load. It calls gemm()
// on N seeded random shapes that the cache does not hold (dims 1..8192, about a third of them
// skinny), round after round, each shape several times per round and synchronized, with a pause
// after each round like an application doing host work, until every shape is tuned in the cache or a
// timeout. It reports the host time of every gemm() call (max, p99, each shape's first call),
// how long each shape took to be tuned, and fails (exit 1) when a call blocked longer than the
// limit or a shape is not in the cache at the end.
// Usage: tilemm-background-bench --help
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_cuda.hpp"
#include "provenance.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"
#include "tuning_store.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using tilemm::bench::cuda;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Shape {
  std::int64_t M = 0, N = 0, K = 0;
  double first_call_ms = 0.0;
  double max_call_ms = 0.0;
  std::optional<double> tuned_after_s;  // since its first call
  Clock::time_point first_call;
  std::string winner;
  std::string text() const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  }
};

// Log-uniform in [1, 8192]; a skinny shape has M or N in [1, 16].
std::vector<Shape> random_shapes(int count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_dim(0.0, std::log(8192.0));
  std::uniform_int_distribution<std::int64_t> skinny_dim(1, 16);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  const auto dim = [&] { return static_cast<std::int64_t>(std::lround(std::exp(log_dim(rng)))); };
  std::vector<Shape> shapes;
  while (static_cast<int>(shapes.size()) < count) {
    Shape s;
    s.M = dim();
    s.N = dim();
    s.K = dim();
    const double kind = coin(rng);
    if (kind < 0.17) s.M = skinny_dim(rng);
    else if (kind < 0.34) s.N = skinny_dim(rng);
    const bool repeated = std::any_of(shapes.begin(), shapes.end(), [&](const Shape& o) {
      return o.M == s.M && o.N == s.N && o.K == s.K;
    });
    if (!repeated) shapes.push_back(s);
  }
  return shapes;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

struct Settings {
  int count = 20;  // --random
  std::uint64_t seed = 0;
  bool seeded = false;
  std::string cache;
  double timeout_s = 1800.0;
  double limit_ms = 5.0;
  int calls_per_visit = 4;
  double idle_ms = 100.0;
  // --again: the shapes of a run before with the same --seed and --cache, tuned now: a new
  // process served from its cache, whose calls must not wait for what its winners need loaded.
  bool again = false;
  int again_rounds = 10;
};

int run(const Settings& settings, const tilemm::tool::ToolCli& cli) {
  tilemm::ContextSettings context_settings;
  context_settings.cache_path = settings.cache;  // empty: TILEMM_CACHE's, as the free functions'
  tilemm::Context context(std::move(context_settings));
  if (tilemm::device_count() == 0)
    return cli.failure(tilemm::tool::no_device("this benchmark needs a GPU"));
  const std::uint64_t seed = settings.seeded ? settings.seed : std::random_device{}();
  std::printf("seed %llu, %d shapes, cache %s\n", static_cast<unsigned long long>(seed),
              settings.count, context.cache_path().c_str());

  // Setup an application pays once, outside the measurement: the CUDA context (first
  // allocation), then one autotune() with tuning off, which opens the cache and reads the
  // preloaded results; it also confirms that each shape is new here.
  std::vector<Shape> shapes = random_shapes(settings.count, seed);
  std::int64_t a_floats = 1, b_floats = 1, c_floats = 1;
  for (const Shape& s : shapes) {
    a_floats = std::max(a_floats, s.M * s.K);
    b_floats = std::max(b_floats, s.K * s.N);
    c_floats = std::max(c_floats, s.M * s.N);
  }
  float *A = nullptr, *B = nullptr, *C = nullptr;
  const auto setup_start = Clock::now();
  cuda(cudaMalloc(reinterpret_cast<void**>(&A), static_cast<std::size_t>(a_floats) * sizeof(float)), "cudaMalloc A");
  cuda(cudaMalloc(reinterpret_cast<void**>(&B), static_cast<std::size_t>(b_floats) * sizeof(float)), "cudaMalloc B");
  cuda(cudaMalloc(reinterpret_cast<void**>(&C), static_cast<std::size_t>(c_floats) * sizeof(float)), "cudaMalloc C");
  cuda(cudaMemset(A, 0x3c, static_cast<std::size_t>(a_floats) * sizeof(float)), "cudaMemset A");
  cuda(cudaMemset(B, 0x3c, static_cast<std::size_t>(b_floats) * sizeof(float)), "cudaMemset B");
  tilemm::Options off;
  off.policy = tilemm::TunePolicy::off;
  const tilemm::DeviceInfo& device = tilemm::current_device();
  tilemm::cache::TuningStore store(context.cache_path());
  // A shape's entry in the cache, from either candidate set in the order a lookup asks them: the
  // bench's own thread asks no provider, so it loads no vendor library that a call would
  // otherwise wait for.
  const auto stored_entry = [&](const Shape& s) {
    tilemm::Problem problem = tilemm::Problem::dense(s.M, s.N, s.K);
    problem.vendor = tilemm::Options::vendor_from_environment();
    std::optional<tilemm::cache::StoredEntry> entry;
    for (const tilemm::cache::CandidateSet set : tilemm::dispatch::sets_serving(problem)) {
      entry = store.find(device.model_key(), s.M, s.N, s.K, tilemm::problem_class(problem),
                         tilemm::Precision::highest, set);
      if (entry) break;
    }
    return entry;
  };
  // The first library call of the process, with the context made: it opens the cache (and checks
  // it where the file changed since its last check) and reads the preloaded results. With
  // --again it asks about a shape outside the random range: an autotune() of a cached shape
  // would make its winner ready, vendor library and all, before the timed calls.
  double first_library_call_ms = -1.0;
  for (const Shape& s : shapes) {
    if (settings.again) {
      if (first_library_call_ms < 0) {
        const auto call_start = Clock::now();
        context.autotune(8193, 1, 1, off);
        first_library_call_ms = ms_between(call_start, Clock::now());
      }
      if (!stored_entry(s))
        return cli.failure("shape " + s.text() + " is not in the cache; --again calls the shapes "
                           "of a run before with the same --seed and --cache");
      continue;
    }
    const auto call_start = Clock::now();
    const auto known = context.autotune(s.M, s.N, s.K, off);
    if (first_library_call_ms < 0) first_library_call_ms = ms_between(call_start, Clock::now());
    if (known.source != tilemm::ResultSource::fallback)
      return cli.failure("shape " + s.text() + " is already tuned (" + tilemm::to_string(known.source) +
                         "); use another --seed or an empty --cache");
  }
  std::printf("setup (context, cache, preloaded results): %.1f ms, of which the first library call "
              "%.3f ms\n",
              ms_between(setup_start, Clock::now()), first_library_call_ms);
  tilemm::Options background;
  background.policy = tilemm::TunePolicy::background;
  std::vector<double> call_ms;
  const auto start = Clock::now();
  std::size_t tuned = 0;
  int rounds = 0;
  const auto more_rounds = [&] {
    if (settings.again) return rounds < settings.again_rounds;
    return tuned < shapes.size() && ms_between(start, Clock::now()) < settings.timeout_s * 1000.0;
  };
  while (more_rounds()) {
    ++rounds;
    for (Shape& s : shapes) {
      for (int i = 0; i < settings.calls_per_visit; ++i) {
        const auto t0 = Clock::now();
        context.gemm(s.M, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, C, s.N, nullptr, background);
        const auto t1 = Clock::now();
        const double ms = ms_between(t0, t1);
        if (s.first_call == Clock::time_point{}) {
          s.first_call = t0;
          s.first_call_ms = ms;
        }
        s.max_call_ms = std::max(s.max_call_ms, ms);
        call_ms.push_back(ms);
      }
      cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    }
    // The application's host work between rounds: the device idles, and the worker times.
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(settings.idle_ms));
    for (Shape& s : shapes) {
      if (s.tuned_after_s) continue;
      const auto entry = stored_entry(s);
      if (!entry) continue;
      s.tuned_after_s = ms_between(s.first_call, Clock::now()) / 1000.0;
      s.winner = entry->winner;
      ++tuned;
    }
  }
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);

  std::printf("\n%-20s %12s %12s %12s  %s\n", "shape", "first ms", "max ms", "tuned after s", "winner");
  int missing = 0, slow = 0;
  for (const Shape& s : shapes) {
    const std::string after = s.tuned_after_s ? std::to_string(*s.tuned_after_s) : "not tuned";
    std::printf("%-20s %12.3f %12.3f %12s  %s\n", s.text().c_str(), s.first_call_ms, s.max_call_ms,
                after.c_str(), s.winner.c_str());
    missing += !s.tuned_after_s;
    slow += s.max_call_ms > settings.limit_ms;
  }
  const double max_ms = call_ms.empty() ? 0.0 : *std::max_element(call_ms.begin(), call_ms.end());
  std::printf("\n%zu gemm() calls in %d rounds: max %.3f ms, p99 %.3f ms, median %.3f ms host time\n",
              call_ms.size(), rounds, max_ms, percentile(call_ms, 0.99), percentile(call_ms, 0.5));
  std::printf("%zu of %zu shapes tuned in the cache in %.1f s\n", tuned, shapes.size(),
              ms_between(start, Clock::now()) / 1000.0);
  if (slow > 0)
    return cli.failure(std::to_string(slow) + " shapes had a gemm() call that blocked longer than " +
                       std::to_string(settings.limit_ms) + " ms");
  if (missing > 0) return cli.failure(std::to_string(missing) + " shapes are not in the cache");
  return tilemm::tool::kSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-background-bench",
                            "TunePolicy::background under load: host time of every gemm() call on "
                            "new shapes while they are tuned in the background.\n",
                            std::cout, std::cerr);
  Settings settings;
  auto* seed = cli.app().add_option("--seed", settings.seed, "Seed of the shapes (default: random, printed)")
                   ->option_text("S");
  cli.app().add_option("--random", settings.count, "How many seeded random new shapes (default: 20)")
      ->option_text("N")->check(tilemm::tool::integer_between(1, 1000));
  cli.app().add_option("--cache", settings.cache, "The cache to use (default: TILEMM_CACHE's)")
      ->option_text("PATH");
  cli.app().add_option("--timeout", settings.timeout_s,
                       "Seconds until the shapes not tuned by then count as missing (default: 1800)")
      ->option_text("S")->check(tilemm::tool::number_between(1, 86400));
  cli.app().add_option("--limit-ms", settings.limit_ms,
                       "Host milliseconds a gemm() call may take (default: 5)")
      ->option_text("MS")->check(tilemm::tool::number_between(0.001, 60000));
  cli.app().add_option("--calls", settings.calls_per_visit,
                       "gemm() calls per shape per round, then a synchronize (default: 4)")
      ->option_text("C")->check(tilemm::tool::integer_between(1, 10000));
  cli.app().add_option("--idle-ms", settings.idle_ms,
                       "Host pause after each round of all shapes, the application's other work: "
                       "the device's idle time, when the worker can time (default: 100)")
      ->option_text("MS")->check(tilemm::tool::number_between(0, 60000));
  cli.app().add_flag("--again", settings.again,
                     "Call the shapes that a run before with the same --seed and --cache tuned, "
                     "in a new process served from that cache, for 10 rounds");
  cli.set_usage("tilemm-background-bench [--random N] [--seed S] [--cache PATH] [--timeout S]\n"
                "                        [--limit-ms MS] [--calls C] [--idle-ms MS] [--again]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-background-bench --cache /tmp/bg.db --random 20 --seed 7\n"
      "\n"
      "Needs a GPU. Give it a cache holding every variant's CUBIN (tilemm-tune --precompile):\n"
      "a fallback whose CUBIN is not stored is compiled by NVRTC on its first call, which blocks.\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  settings.seeded = seed->count() > 0;
  if (settings.again && !settings.seeded)
    return cli.usage_error("--again needs the --seed of the run before");
  return cli.run([&] { return run(settings, cli); });
}
