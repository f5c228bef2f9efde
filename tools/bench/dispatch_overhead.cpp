// tilemm-dispatch-bench: what dispatch costs on the host.
//   1. Warm call overhead: host time of tilemm::gemm() minus host time of a raw launch of the
//      same loaded kernel (cudaLaunchKernel through tilemm's launch), same problem, same stream.
//   2. First call in a new process whose cache holds the winner, or its CUBIN for a preloaded
//      winner: a child process times its first gemm() (cache open, lookup, the preloaded headers
//      for a preloaded shape, CUBIN load, launch, synchronize), after CUDA itself is initialized,
//      which any CUDA application pays anyway (reported separately).
// Usage: tilemm-dispatch-bench --help    (uses TILEMM_CACHE like the library)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cuda.hpp"
#include "kernel_library.hpp"
#include "launch.hpp"
#include "row_split.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using tilemm::bench::cuda;

struct Buffers {
  float *A = nullptr, *B = nullptr, *C = nullptr;
  explicit Buffers(int n) {
    const std::size_t bytes = static_cast<std::size_t>(n) * n * sizeof(float);
    cuda(cudaMalloc(reinterpret_cast<void**>(&A), bytes), "cudaMalloc");
    cuda(cudaMalloc(reinterpret_cast<void**>(&B), bytes), "cudaMalloc");
    cuda(cudaMalloc(reinterpret_cast<void**>(&C), bytes), "cudaMalloc");
    cuda(cudaMemset(A, 0x3c, bytes), "cudaMemset");  // small positive floats
    cuda(cudaMemset(B, 0x3c, bytes), "cudaMemset");
  }
  tilemm::GemmArgs args(int n) const {
    tilemm::GemmArgs a;
    a.M = a.N = a.K = n;
    a.A = A;
    a.B = B;
    a.C = C;
    a.lda = a.ldb = a.ldc = n;
    return a;
  }
};

// Host microseconds per call of `call`, median over rounds of `batch` calls each.
template <typename F>
double host_us_per_call(F&& call, int rounds, int batch) {
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < batch; ++i) call();
    const auto stop = Clock::now();
    cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    per_call.push_back(std::chrono::duration<double, std::micro>(stop - start).count() / batch);
  }
  return median(per_call);
}

int first_call_child(int n) {
  const auto t0 = Clock::now();
  cuda(cudaFree(nullptr), "CUDA initialization");
  const auto t1 = Clock::now();
  Buffers b(n);
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto t2 = Clock::now();
  tilemm::gemm(b.args(n));
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto t3 = Clock::now();
  std::printf("%.3f %.3f %llu %llu\n", std::chrono::duration<double, std::milli>(t3 - t2).count(),
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              static_cast<unsigned long long>(tilemm::nvrtc_compilations()),
              static_cast<unsigned long long>(tilemm::tunings_run()));
  return 0;
}

// Both measurements for N x N x N, printed.
int measure(int n, int children, const char* program, tilemm::tool::ToolCli& cli) {
  const auto tuned = tilemm::autotune(n, n, n);
  Buffers b(n);
  const tilemm::GemmArgs args = b.args(n);
  tilemm::gemm(args);  // warm: decision in memory, kernel loaded
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto& device = tilemm::current_device();
  if (tilemm::detail::parse_row_split(tuned.winner)) {
    return cli.failure("the winner for " + std::to_string(n) + " is " + tuned.winner +
                       ", two launches; this benchmark compares one gemm() with one launch: "
                       "pick another size");
  }
  const auto* kernel = tilemm::detail::find_loaded(device, tilemm::parse_variant(tuned.winner));
  if (kernel == nullptr) return cli.failure("the winner is not loaded after gemm()");
  const int rounds = 51, batch = 200;
  // Interleave so that clock or queue effects hit both alike.
  std::vector<double> raw, api;
  for (int rep = 0; rep < 5; ++rep) {
    raw.push_back(host_us_per_call([&] { tilemm::detail::launch(*kernel, args, nullptr); }, rounds, batch));
    api.push_back(host_us_per_call([&] { tilemm::gemm(args); }, rounds, batch));
  }
  const double raw_us = median(raw), api_us = median(api);

  std::vector<double> first_ms, init_ms;
  unsigned long long compiles = 0, tunings = 0;
  for (int c = 0; c < children; ++c) {
    const std::string cmd = std::string(program) + " --first-call --sizes " + std::to_string(n);
    std::FILE* pipe = popen(cmd.c_str(), "r");
    double first = 0, init = 0;
    unsigned long long cc = 0, tt = 0;
    if (pipe == nullptr || std::fscanf(pipe, "%lf %lf %llu %llu", &first, &init, &cc, &tt) != 4) {
      if (pipe != nullptr) pclose(pipe);
      return cli.failure("a first-call child process (" + cmd + ") failed");
    }
    pclose(pipe);
    first_ms.push_back(first);
    init_ms.push_back(init);
    compiles += cc;
    tunings += tt;
  }
  // Where the winner came from: a preloaded one is what a child's first gemm() finds too
  // (its CUBIN is in the cache after the autotune() above), through the preloaded headers.
  std::printf("shape %dx%dx%d winner %s (source %s)\n", n, n, n, tuned.winner.c_str(),
              tilemm::to_string(tuned.source));
  std::printf("raw launch host time          %8.3f us/call (median of %d x %d calls)\n", raw_us, 5 * rounds, batch);
  std::printf("tilemm::gemm host time        %8.3f us/call\n", api_us);
  std::printf("warm dispatch overhead        %8.3f us/call (target < 1 us)\n", api_us - raw_us);
  std::printf("first gemm in a new process   %8.3f ms (median of %d processes; target <= 5 ms)\n", median(first_ms), children);
  std::printf("  CUDA initialization before  %8.3f ms (not tilemm's, reported for context)\n", median(init_ms));
  std::printf("  NVRTC compilations / tunings in those processes: %llu / %llu\n", compiles, tunings);
  return tilemm::tool::kSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-dispatch-bench",
                            "What dispatch costs on the host: a warm tilemm::gemm() against a raw "
                            "launch of the same kernel, and the first gemm() in a new process.\n",
                            std::cout, std::cerr);
  std::vector<int> sizes = {256};
  int children = 7;
  bool child = false;
  cli.app().add_option("--sizes", sizes, "Square sizes N x N x N, e.g. 256,1024 (default: 256)")
      ->option_text("LIST")->delimiter(',')->check(tilemm::tool::integer_between(1, 32768));
  cli.app().add_option("--children", children,
                       "Fresh processes for the first-call measurement (default: 7)")
      ->option_text("C")->check(tilemm::tool::integer_between(1, 1000));
  cli.app().add_flag("--first-call", child)->group("");  // the child mode it starts itself
  cli.set_usage("tilemm-dispatch-bench [--sizes LIST] [--children C]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-dispatch-bench --sizes 256\n"
      "  tilemm-dispatch-bench --sizes 256,1024 --children 15\n"
      "\n"
      "Needs a GPU; tunes a size first if the cache (TILEMM_CACHE) has no winner for it.\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  return cli.run([&] {
    if (child) return first_call_child(sizes.at(0));
    if (tilemm::device_count() == 0) return cli.failure(tilemm::tool::no_device("this benchmark needs a GPU"));
    for (const int n : sizes)
      if (const int status = measure(n, children, argv[0], cli); status != tilemm::tool::kSuccess)
        return status;
    return tilemm::tool::kSuccess;
  });
}

