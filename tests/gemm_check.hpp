// Runs a GEMM through a callable on fresh random data and counts elements outside the float64
// reference's error bound.
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::testing {

struct GemmCheck {
  std::int64_t wrong = 0;
  std::string first;  // the first wrong element, described
};

// A dense row-major problem on fresh random data (C too, for beta), its float64 reference, and
// its device buffers: run it through any number of kernels, each from the same initial C.
class DenseProblem {
 public:
  DenseProblem(std::int64_t M, std::int64_t N, std::int64_t K, float alpha, float beta,
               std::mt19937_64& rng)
      : N_(N),
        K_(K),
        a_(random_matrix(static_cast<std::size_t>(M * K), rng)),
        b_(random_matrix(static_cast<std::size_t>(K * N), rng)),
        c0_(random_matrix(static_cast<std::size_t>(M * N), rng)),
        ref_(reference_gemm(M, N, K, alpha, a_, K, b_, N, beta, c0_, N)),
        A_(a_.size()),
        B_(b_.size()),
        C_(c0_.size()),
        args_(dense_args(M, N, K, alpha, A_.get(), B_.get(), beta, C_.get())) {
    A_.upload(a_);
    B_.upload(b_);
  }

  const GemmArgs& args() const { return args_; }

  // C set to its initial values, `run` called and waited for, C downloaded. A CUDA error throws,
  // naming `what` (the variant, say).
  std::vector<float> run(const std::function<void(const GemmArgs&)>& run,
                         const std::string& what = "gemm") {
    C_.upload(c0_);
    run(args_);
    cuda_ok(cudaDeviceSynchronize(), ("cudaDeviceSynchronize after " + what).c_str());
    return C_.download();
  }

  // C as it is now, for a caller that enqueues args() itself and has synchronized.
  std::vector<float> output() const { return C_.download(); }

  // The elements of `out` outside the reference's error bound or not finite, the first described.
  // Every element within tolerance() of a kernel of `precision`.
  GemmCheck check(const std::vector<float>& out, Precision precision = Precision::highest) const {
    GemmCheck result;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double err = std::fabs(out[i] - ref_.value[i]);
      if (!(std::isfinite(out[i]) && err <= tolerance(K_, ref_.magnitude[i], precision))) {
        if (result.wrong++ == 0) {
          std::ostringstream s;
          s << "C[" << static_cast<std::int64_t>(i) / N_ << "][" << static_cast<std::int64_t>(i) % N_
            << "] = " << out[i] << ", reference " << ref_.value[i];
          result.first = s.str();
        }
      }
    }
    return result;
  }

 private:
  std::int64_t N_, K_;
  std::vector<float> a_, b_, c0_;
  Reference ref_;
  DeviceBuffer A_, B_, C_;
  GemmArgs args_;
};

inline GemmCheck check_gemm(std::int64_t M, std::int64_t N, std::int64_t K, float alpha,
                            float beta, const std::function<void(const GemmArgs&)>& run) {
  std::mt19937_64 rng(fresh_seed());
  DenseProblem problem(M, N, K, alpha, beta, rng);
  return problem.check(problem.run(run));
}

}  // namespace tilemm::testing
