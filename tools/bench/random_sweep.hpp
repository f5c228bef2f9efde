// tilemm-bench --random N --seed S: a sweep of random shapes against cuBLAS FP32, the way a new
// user meets tilemm. Each dimension is drawn log-uniform in 1..10000; every other shape has no
// dimension that is a multiple of 8 (the others are rounded up to multiples of 8). The first call
// of each shape tunes (budgeted search, default options), once with vendor candidates
// (Options::vendor) and once with own kernels only; both tunings are cached apart (the dispatcher
// keys and the store's usability rule keep them apart), then cuBLAS (pedantic FP32) and both
// tilemm runs are timed in the same rounds on the same buffers (time_ms_interleaved: CUDA events,
// warm-up, median), and once more called back to back with their host side
// (time_ms_per_call_interleaved).
#pragma once

#include <cstdint>
#include <vector>

#include "tune_cli.hpp"

namespace tilemm::bench {

// `count` shapes drawn from `seed` as above.
std::vector<cli::Shape> random_shapes(int count, std::uint64_t seed);

struct SweepSettings {
  bool with_vendor = true;  // time tilemm with vendor candidates too (false: --no-vendor)
  double budget_ms = 100;   // timed milliseconds per contender and shape
};

// Runs the sweep and prints, per shape, cuBLAS's time and each tilemm run's winner and ratios
// (cuBLAS time / tilemm time), then min, p10, median and geomean of the ratios per run and
// timing, how many shapes are at 0.95 and at 0.9 or more, and the shapes below 0.95. Returns the
// tool's exit code.
int run_random_sweep(const std::vector<cli::Shape>& shapes, const SweepSettings& settings);

}  // namespace tilemm::bench
