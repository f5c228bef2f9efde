// tilemm-vendor-load-probe: what loading the vendor libraries costs the other threads of a process.
// A background tuning is the first to use cuBLASLt and cuBLAS; meanwhile the application's threads
// go on calling gemm(). This program has one thread call gemm() on a resolved shape and load and
// unload a small CUBIN (the work of a first call whose kernel comes from the cache), back to back,
// while the main thread makes the vendor providers ready step by step, as a tuning would: the
// library's load, its candidates (handle, heuristic), a prepared candidate and its first call.
// It prints, for each step and for windows before and after, how long the step took and the
// longest gemm() call and CUBIN load that overlapped it.
// Usage: tilemm-vendor-load-probe --help
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "candidate_provider.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

double ms_since(Clock::time_point origin, Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t - origin).count();
}

enum class Work { gemm_call, cubin_load };

struct Sample {
  Work work;
  double start_ms, end_ms;  // since the probe's origin
};

struct Window {
  std::string step;
  double start_ms, end_ms;
};

// The other thread's work until `stop`: gemm() on a resolved shape (launch, then a synchronize
// outside the timed part), then a CUBIN loaded and unloaded.
void keep_calling(const tilemm::GemmArgs& args, const tilemm::Options& options,
                  const std::vector<char>& cubin,
                  Clock::time_point origin, const std::atomic<bool>& stop,
                  std::vector<Sample>& samples, std::string& error) {
  try {
    while (!stop.load()) {
      auto t = Clock::now();
      tilemm::gemm(args, nullptr, options);
      auto u = Clock::now();
      samples.push_back({Work::gemm_call, ms_since(origin, t), ms_since(origin, u)});
      cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      cudaLibrary_t library = nullptr;
      t = Clock::now();
      cuda(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
           "cudaLibraryLoadData");
      u = Clock::now();
      samples.push_back({Work::cubin_load, ms_since(origin, t), ms_since(origin, u)});
      cuda(cudaLibraryUnload(library), "cudaLibraryUnload");
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
}

void print_windows(const std::vector<Window>& windows, const std::vector<Sample>& samples) {
  std::printf("%-34s %9s %20s %20s\n", "step", "ms", "longest gemm() (n)", "longest load (n)");
  for (const Window& w : windows) {
    double longest[2] = {0.0, 0.0};
    int count[2] = {0, 0};
    for (const Sample& s : samples) {
      if (s.end_ms < w.start_ms || s.start_ms > w.end_ms) continue;  // no overlap
      const int i = s.work == Work::gemm_call ? 0 : 1;
      longest[i] = std::max(longest[i], s.end_ms - s.start_ms);
      ++count[i];
    }
    std::printf("%-34s %9.3f %12.3f (%5d) %12.3f (%5d)\n", w.step.c_str(), w.end_ms - w.start_ms,
                longest[0], count[0], longest[1], count[1]);
  }
}

int run(const tilemm::tool::ToolCli& cli, double quiet_ms) {
  if (tilemm::device_count() == 0)
    return cli.failure(tilemm::tool::no_device("this probe needs a GPU"));
  const tilemm::DeviceInfo& device = tilemm::current_device();
  constexpr int n = 64;
  const std::size_t bytes = static_cast<std::size_t>(n) * n * sizeof(float);
  float *A = nullptr, *B = nullptr, *C = nullptr;
  cuda(cudaMalloc(reinterpret_cast<void**>(&A), bytes), "cudaMalloc A");
  cuda(cudaMalloc(reinterpret_cast<void**>(&B), bytes), "cudaMalloc B");
  cuda(cudaMalloc(reinterpret_cast<void**>(&C), bytes), "cudaMalloc C");
  cuda(cudaMemset(A, 0x3c, bytes), "cudaMemset A");
  cuda(cudaMemset(B, 0x3c, bytes), "cudaMemset B");
  tilemm::GemmArgs args;
  args.M = args.N = args.K = n;
  args.A = A;
  args.B = B;
  args.C = C;
  args.lda = args.ldb = args.ldc = n;
  // Resolved before the measurement, with no vendor library touched: tuning off, own kernels.
  tilemm::Options own;
  own.policy = tilemm::TunePolicy::off;
  own.vendor = false;
  tilemm::gemm(args, nullptr, own);
  cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto cubin =
      tilemm::detail::compile_variant(tilemm::default_variant(), device.arch()).cubin;

  const auto origin = Clock::now();
  std::vector<Sample> samples;
  samples.reserve(1 << 20);
  std::atomic<bool> stop{false};
  std::string error;
  std::thread other(keep_calling, std::cref(args), std::cref(own), std::cref(cubin), origin, std::cref(stop),
                    std::ref(samples), std::ref(error));
  std::vector<Window> windows;
  const auto step = [&](const std::string& name, auto&& body) {
    const auto t = Clock::now();
    body();
    windows.push_back({name, ms_since(origin, t), ms_since(origin, Clock::now())});
  };
  const auto quiet = [&](const std::string& name) {
    step(name, [&] {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(quiet_ms));
    });
  };
  quiet("before");
  tilemm::Problem problem = tilemm::Problem::dense(300, 200, 1000);
  for (tilemm::detail::CandidateProvider* provider : tilemm::detail::candidate_providers()) {
    if (!provider->vendor()) continue;
    const std::string name = provider->prefix();
    bool available = false;
    step(name + ": load", [&] { available = provider->available(); });
    if (!available) {
      std::printf("%s is not available here\n", name.c_str());
      continue;
    }
    std::vector<std::string> names;
    step(name + ": candidates", [&] { names = provider->candidates(device, problem); });
    if (names.empty()) continue;
    const tilemm::detail::PreparedCandidate* prepared = nullptr;
    step(name + ": prepare", [&] { prepared = &provider->prepare(names.front(), device); });
    tilemm::GemmArgs vendor_args = args;
    vendor_args.M = problem.M;
    vendor_args.N = problem.N;
    vendor_args.K = problem.K;
    vendor_args.lda = problem.K;
    vendor_args.ldb = problem.N;
    vendor_args.ldc = problem.N;
    float *a = nullptr, *b = nullptr, *c = nullptr;
    cuda(cudaMalloc(reinterpret_cast<void**>(&a), 300 * 1000 * sizeof(float)), "cudaMalloc");
    cuda(cudaMalloc(reinterpret_cast<void**>(&b), 1000 * 200 * sizeof(float)), "cudaMalloc");
    cuda(cudaMalloc(reinterpret_cast<void**>(&c), 300 * 200 * sizeof(float)), "cudaMalloc");
    vendor_args.A = a;
    vendor_args.B = b;
    vendor_args.C = c;
    step(name + ": first call", [&] {
      prepared->enqueue(vendor_args, nullptr);
      cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    });
    quiet("after " + name);
  }
  stop = true;
  other.join();
  if (!error.empty()) return cli.failure("the calling thread failed: " + error);
  std::printf("%s, vendor libraries loaded by the main thread while another calls gemm() and "
              "loads CUBINs\n",
              device.name.c_str());
  print_windows(windows, samples);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-vendor-load-probe",
                            "How long another thread's gemm() calls and CUBIN loads take while the "
                            "vendor libraries are loaded and made ready.\n",
                            std::cout, std::cerr);
  double quiet_ms = 200.0;
  cli.app().add_option("--quiet-ms", quiet_ms,
                       "Length of the windows before and after each library (default: 200)")
      ->option_text("MS")->check(tilemm::tool::number_between(1, 10000));
  cli.set_usage("tilemm-vendor-load-probe [--quiet-ms MS]");
  cli.set_footer("Examples:\n"
                 "  TILEMM_LOG=debug tilemm-vendor-load-probe\n"
                 "\n"
                 "Needs a GPU, and a process that has not loaded cuBLASLt or cuBLAS yet (this one).\n"
                 "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  return cli.run([&] { return run(cli, quiet_ms); });
}
