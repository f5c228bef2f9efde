// tilemm-split-probe: would splitting a problem's rows pay? Where M is not a multiple of the tile
// height, the one extra partial row of tiles can be a nearly empty last wave over the SMs: 4097
// rows in 256-row tiles are 17 tile rows, the 17th holding one row.
// This probe times, for each shape, tilemm::gemm on the whole problem against gemm on a core of
// rows (M rounded down to a multiple of 256, 128 or 64) followed by gemm on the remaining rows,
// each part dispatched to its own tuned winner, all under tilemm-bench's harness. It checks that
// the two give the same C within the FP32 error bound. It measures; it changes nothing in the
// dispatch: whether tilemm should split rows itself is decided from what it prints.
//
// Usage: tilemm-split-probe --help
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench_harness.hpp"
#include "row_split.hpp"
#include "tilemm/tilemm.hpp"
#include "tool_conventions.hpp"

namespace {

using tilemm::bench::cuda;
using tilemm::bench::dense_args;
using tilemm::bench::Problem;
using tilemm::bench::Set;
using tilemm::bench::time_ms;

}  // namespace

int main(int argc, char** argv) {
  tilemm::tool::ToolCli cli("tilemm-split-probe",
                            "Times tilemm::gemm() on a problem against the same problem split "
                            "into a core of rows and the rest, each part to its own winner.\n",
                            std::cout, std::cerr);
  tilemm::bench::ShapeOptions options(cli.app(), "3000,4097", 150);
  cli.set_usage("tilemm-split-probe [--sizes LIST | --shapes LIST] [--ms-per-case MS]");
  cli.set_footer(
      "Examples:\n"
      "  tilemm-split-probe --sizes 3000,4097\n"
      "  tilemm-split-probe --shapes 4097x1024x1024 --ms-per-case 50\n"
      "\n"
      "Needs a GPU; uses the tuning cache the library would (TILEMM_CACHE).\n"
      "\n" + tilemm::tool::exit_codes_help() + "\n");
  if (const auto done = cli.parse(argc, argv)) return *done;
  const double budget_ms = options.budget_ms;
  return cli.run([&] {
    const auto todo = options.to_run();
    const tilemm::DeviceInfo& device = tilemm::current_device();

    std::printf("%-16s %9s %-46s %-46s %9s %9s %9s %9s %8s %s\n", "shape", "core rows",
                "core winner", "rest winner", "core ms", "rest ms", "split ms", "whole ms",
                "whole/spl", "same C");
    for (const auto& [m, n, k] : todo) {
      const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      const tilemm::AutotuneResult whole = tilemm::autotune(m, n, k);
      Problem p(m, n, k, device.l2_bytes);
      auto run_whole = [&](const Set& s) { tilemm::gemm(dense_args(p, s, 0, m)); };
      const double whole_ms = time_ms(p, run_whole, budget_ms);
      cuda(cudaMemset(p.set(0).C, 0xFF, static_cast<std::size_t>(m * n) * sizeof(float)), "poison C");
      run_whole(p.set(0));
      cuda(cudaDeviceSynchronize(), "whole problem");
      const auto c_whole = p.download_c0();

      std::set<std::int64_t> cores;
      for (std::int64_t tile : {256, 128, 64})
        if (const std::int64_t core = m / tile * tile; core > 0 && core < m) cores.insert(core);
      if (cores.empty()) std::printf("%-16s M is a multiple of 64: nothing to split\n", shape.c_str());
      for (const std::int64_t core : cores) {
        const std::int64_t rest = m - core;
        // Tuned (or served from the cache) before timing, like the whole problem.
        const std::string core_winner = tilemm::autotune(core, n, k).winner;
        const std::string rest_winner = tilemm::autotune(rest, n, k).winner;
        auto run_core = [&](const Set& s) { tilemm::gemm(dense_args(p, s, 0, core)); };
        auto run_rest = [&](const Set& s) { tilemm::gemm(dense_args(p, s, core, rest)); };
        // The plan as gemm() runs it (the one plan runner), each part to its own winner.
        auto run_split = [&](const Set& s) {
          tilemm::detail::run_row_split(dense_args(p, s), core,
                                        [](int, const tilemm::GemmArgs& part) { tilemm::gemm(part); });
        };
        const double core_ms = time_ms(p, run_core, budget_ms);
        const double rest_ms = time_ms(p, run_rest, budget_ms);
        const double split_ms = time_ms(p, run_split, budget_ms);

        cuda(cudaMemset(p.set(0).C, 0xFF, static_cast<std::size_t>(m * n) * sizeof(float)), "poison C");
        run_split(p.set(0));
        cuda(cudaDeviceSynchronize(), "split problem");
        const auto c_split = p.download_c0();
        // Inputs in [-1, 1]: each result is within 2 (K + 3) 2^-24 K of the exact one, so two
        // FP32 results are within twice that of each other.
        const double bound = 4.0 * double(k + 3) * std::ldexp(1.0, -24) * double(k);
        double worst = 0;
        for (std::size_t i = 0; i < c_split.size(); ++i)
          worst = std::max(worst, std::isfinite(c_split[i])
                                      ? std::fabs(double(c_split[i]) - double(c_whole[i]))
                                      : INFINITY);
        std::printf("%-16s %9lld %-46s %-46s %9.4f %9.4f %9.4f %9.4f %8.3f %s\n", shape.c_str(),
                    static_cast<long long>(core), core_winner.c_str(), rest_winner.c_str(),
                    core_ms, rest_ms, split_ms, whole_ms, whole_ms / split_ms,
                    worst <= bound ? "yes" : "NO");
      }
      std::printf("%-16s whole winner: %s\n", shape.c_str(), whole.winner.c_str());
    }
    return tilemm::tool::kSuccess;
  });
}
