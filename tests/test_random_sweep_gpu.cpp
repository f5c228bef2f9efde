// tilemm-bench --random N --seed S (tools/bench/random_sweep.cpp), run as an operator runs it: each
// run's summary in every timing the sweep reports, and each shape's result checked against cuBLAS.
#include <gtest/gtest.h>

#include <cmath>
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
  }
}

}  // namespace
}  // namespace tilemm::testing
