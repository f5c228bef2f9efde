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
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "candidate_provider.hpp"
#include "cuda_check.hpp"
#include "nvrtc_compiler.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace {

using Clock = std::chrono::steady_clock;

using tilemm::detail::check_cuda;

// A dense row-major problem's device matrices, A and B filled with small positive floats, and
// the gemm() arguments over them.
class DeviceProblem {
 public:
  DeviceProblem(std::int64_t M, std::int64_t N, std::int64_t K) {
    for (const auto& [buffer, floats] : {std::pair{&A_, M * K}, {&B_, K * N}, {&C_, M * N}}) {
      const std::size_t bytes = static_cast<std::size_t>(floats) * sizeof(float);
      check_cuda(cudaMalloc(reinterpret_cast<void**>(buffer), bytes), "cudaMalloc");
      check_cuda(cudaMemset(*buffer, 0x3c, bytes), "cudaMemset");
    }
    args_.M = M;
    args_.N = N;
    args_.K = K;
    args_.A = A_;
    args_.B = B_;
    args_.C = C_;
    args_.lda = K;
    args_.ldb = N;
    args_.ldc = N;
  }
  ~DeviceProblem() {
    for (float* buffer : {A_, B_, C_}) cudaFree(buffer);
  }
  DeviceProblem(const DeviceProblem&) = delete;
  DeviceProblem& operator=(const DeviceProblem&) = delete;
  const tilemm::GemmArgs& args() const { return args_; }

 private:
  float *A_ = nullptr, *B_ = nullptr, *C_ = nullptr;
  tilemm::GemmArgs args_;
};

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
      check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      cudaLibrary_t library = nullptr;
      t = Clock::now();
      check_cuda(cudaLibraryLoadData(&library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                 "cudaLibraryLoadData");
      u = Clock::now();
      samples.push_back({Work::cubin_load, ms_since(origin, t), ms_since(origin, u)});
      check_cuda(cudaLibraryUnload(library), "cudaLibraryUnload");
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
  const DeviceProblem resolved(64, 64, 64);  // the other thread's
  const DeviceProblem vendor(300, 200, 1000);  // each vendor provider's first call
  const tilemm::GemmArgs& args = resolved.args();
  // Resolved before the measurement, with no vendor library touched: tuning off, own kernels.
  tilemm::Options own;
  own.policy = tilemm::TunePolicy::off;
  own.vendor = false;
  tilemm::gemm(args, nullptr, own);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
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
  // The other thread is stopped and joined whatever happens here, so that a failure is reported
  // rather than ending the process with the thread still running.
  std::exception_ptr failed;
  try {
    quiet("before");
    const tilemm::Problem problem = vendor.args().problem();
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
      step(name + ": first call", [&] {
        prepared->enqueue(vendor.args(), nullptr);
        check_cuda(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
      });
      quiet("after " + name);
    }
  } catch (...) {
    failed = std::current_exception();
  }
  stop = true;
  other.join();
  if (failed) std::rethrow_exception(failed);
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
