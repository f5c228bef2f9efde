// tilemm-bench --random N --seed S (tools/bench/random_sweep.cpp), run as an operator runs it: each
// run's summary in every timing the sweep reports, and each shape's result checked against cuBLAS.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iterator>
#include <regex>
#include <string>

#include "gpu_test_support.hpp"
#include "program_output.hpp"
#include "temp_dir.hpp"

namespace tilemm::testing {
namespace {

struct Summary {
  double min = NAN, p10 = NAN, median = NAN, geomean = NAN;
};

// The numbers of the line "summary <run> <what>: min A  p10 B  median C  geomean D".
Summary summary_of(const std::string& text, const std::string& run, const std::string& what) {
  const std::regex line("summary " + run + " +" + what +
                        ": min ([0-9.]+) +p10 ([0-9.]+) +median ([0-9.]+) +geomean ([0-9.]+)");
  std::smatch m;
  Summary s;
  if (!std::regex_search(text, m, line)) return s;
  s.min = std::stod(m[1]);
  s.p10 = std::stod(m[2]);
  s.median = std::stod(m[3]);
  s.geomean = std::stod(m[4]);
  return s;
}

void expect_ordered_ratios(const Summary& s, const std::string& what) {
  ASSERT_TRUE(std::isfinite(s.min) && std::isfinite(s.geomean)) << what << ": no summary";
  EXPECT_GT(s.min, 0.0) << what;
  EXPECT_LE(s.min, s.p10) << what;
  EXPECT_LE(s.p10, s.median) << what;
  EXPECT_LE(s.min, s.geomean) << what;
}

// The shapes the line "summary <run> shapes at 0.95 or more: X of N  at 0.9 or more: Y of N"
// counts, {X, Y, N}; {-1, -1, -1} without it.
std::array<int, 3> counts_of(const std::string& text, const std::string& run) {
  const std::regex line("summary " + run +
                        " +shapes at 0.95 or more: ([0-9]+) of ([0-9]+) +at 0.9 or more: ([0-9]+) of "
                        "([0-9]+)");
  std::smatch m;
  if (!std::regex_search(text, m, line) || m[2] != m[4]) return {-1, -1, -1};
  return {std::stoi(m[1]), std::stoi(m[3]), std::stoi(m[2])};
}

// The lines "  <run> below 0.95: ..." the sweep lists.
int losses_listed(const std::string& text, const std::string& run) {
  const std::regex line("\\n  " + run + " below 0\\.95: ");
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), line),
                                        std::sregex_iterator()));
}

TEST(RandomSweep, SummarizesEachRunHeldAndCalledBackToBack) {
  TILEMM_REQUIRE_DEVICE();
  TempDir dir;
  const ProgramOutput o =
      run_command("TILEMM_CACHE='" + dir.file("sweep.db") + "' '" TILEMM_BENCH_BINARY
                  "' --random 3 --seed 7 --ms-per-case 2 2>&1");
  ASSERT_EQ(o.code, 0) << o.text;
  EXPECT_EQ(o.text.find("MISMATCH"), std::string::npos) << o.text;
  for (const std::string run : {"vendor on", "own only"}) {
    expect_ordered_ratios(summary_of(o.text, run, "over 3 shapes"), run + ", held launches");
    expect_ordered_ratios(summary_of(o.text, run, "calls back to back"),
                          run + ", calls back to back");
    const auto [at_095, at_09, shapes] = counts_of(o.text, run);
    EXPECT_EQ(shapes, 3) << run << ": no count of the shapes at 0.95 and 0.9\n" << o.text;
    EXPECT_LE(at_095, at_09) << run;
    EXPECT_LE(at_09, shapes) << run;
    EXPECT_EQ(losses_listed(o.text, run), shapes - at_095) << run << "\n" << o.text;
  }
}

}  // namespace
}  // namespace tilemm::testing
