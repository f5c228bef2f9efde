// Child process of test_autotune: dispatches the shapes given as arguments (MxNxK ...) through
// tilemm::gemm with the cache named by TILEMM_CACHE, checks every result against the float64
// reference, and exits 0 only if all were correct and nothing was compiled or tuned (and no vendor
// heuristic was asked). With
// --may-tune first, tuning and compiling are allowed (the counts are printed either way). It
// also prints the CUDA runtime's last error, which tilemm must leave clear after a good call.
// With --linger-ms N after --may-tune, it waits N ms before returning from main: under
// TILEMM_TUNE=background, the process then ends while its worker may still be tuning.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <cuda_runtime_api.h>
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include "gemm_check.hpp"
#include "tilemm/autotune.hpp"

namespace {
// A crash (in a worker thread at exit, say) prints its stack to stderr before the process dies,
// so that a test that sees the child fail can say where.
void print_stack_and_die(int signal_number) {
  void* frames[64];
  const int count = backtrace(frames, 64);
  const char header[] = "dispatch_child: fatal signal, stack:\n";
  (void)!write(STDERR_FILENO, header, sizeof header - 1);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}
}  // namespace

int main(int argc, char** argv) {
  signal(SIGSEGV, print_stack_and_die);
  signal(SIGABRT, print_stack_and_die);
  setvbuf(stdout, nullptr, _IOLBF, 0);  // lines reach the parent even if the process dies
  int failures = 0;
  const bool may_tune = argc > 1 && std::string(argv[1]) == "--may-tune";
  int first_shape = may_tune ? 2 : 1;
  long linger_ms = 0;
  if (may_tune && argc > 3 && std::string(argv[2]) == "--linger-ms") {
    linger_ms = std::atol(argv[3]);
    first_shape = 4;
  }
  try {
    for (int i = first_shape; i < argc; ++i) {
      long long m = 0, n = 0, k = 0;
      if (std::sscanf(argv[i], "%lldx%lldx%lld", &m, &n, &k) != 3) {
        std::fprintf(stderr, "dispatch_child: bad shape '%s'\n", argv[i]);
        return 2;
      }
      const auto check = tilemm::testing::check_gemm(m, n, k, 1.25f, -0.5f, [](const tilemm::GemmArgs& a) {
        tilemm::gemm(a);
      });
      std::printf("shape %s wrong=%lld %s\n", argv[i], static_cast<long long>(check.wrong),
                  check.first.c_str());
      failures += check.wrong > 0;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dispatch_child: %s\n", e.what());
    return 3;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(linger_ms));
  std::printf("last_error=%s\n", cudaGetErrorName(cudaGetLastError()));
  std::printf("compilations=%llu tunings=%llu heuristic_queries=%llu\n",
              static_cast<unsigned long long>(tilemm::nvrtc_compilations()),
              static_cast<unsigned long long>(tilemm::tunings_run()),
              static_cast<unsigned long long>(tilemm::vendor_heuristic_queries()));
  if (may_tune) return failures == 0 ? 0 : 1;
  return failures == 0 && tilemm::nvrtc_compilations() == 0 && tilemm::tunings_run() == 0 &&
                 tilemm::vendor_heuristic_queries() == 0
             ? 0
             : 1;
}
