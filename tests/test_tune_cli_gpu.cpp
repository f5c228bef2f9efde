// tilemm-tune end to end on the GPU, run as a separate process like an operator would.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "gpu_test_support.hpp"
#include "program_output.hpp"
#include "temp_dir.hpp"

namespace {

using Output = tilemm::testing::ProgramOutput;

Output run(const std::string& args, const char* binary = TILEMM_TUNE_BINARY) {
  return tilemm::testing::run_command(std::string(binary) + " " + args);
}

TEST(TuneCliGpu, TunesShapesPrintsJsonAndServesTheSecondRunFromTheCache) {
  TILEMM_REQUIRE_DEVICE();
  tilemm::testing::TempDir dir;
  const std::string cache = dir.file("cli.db");
  const Output first = run("--cache " + cache + " --sizes 128,256 --shapes 100x200x300 --json");
  ASSERT_EQ(first.code, 0) << first.text;
  const auto doc = nlohmann::json::parse(first.text);
  ASSERT_EQ(doc["devices"].size(), 1u);
  const auto& device = doc["devices"][0];
  EXPECT_FALSE(device["name"].get<std::string>().empty());
  EXPECT_EQ(device["arch"].get<std::string>().rfind("sm_", 0), 0u);
  ASSERT_EQ(device["results"].size(), 3u);
  EXPECT_TRUE(device["errors"].empty());
  for (const auto& r : device["results"]) {
    EXPECT_EQ(r["source"], "tuned");
    EXPECT_GT(r["median_ms"].get<double>(), 0.0);
    EXPECT_GT(r["tflops"].get<double>(), 0.0);
    ASSERT_FALSE(r["candidates"].empty());
    EXPECT_EQ(r["candidates"][0]["variant"], r["winner"]);
    EXPECT_EQ(r["candidates"][0]["status"], "ok");
  }
  EXPECT_EQ(device["results"][2]["m"], 100);
  EXPECT_EQ(device["results"][2]["k"], 300);

  const Output second = run("--cache " + cache + " --sizes 128,256 --shapes 100x200x300 --json");
  ASSERT_EQ(second.code, 0) << second.text;
  const auto again = nlohmann::json::parse(second.text);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& r = again["devices"][0]["results"][i];
    EXPECT_EQ(r["source"], "cache");
    EXPECT_EQ(r["winner"], device["results"][i]["winner"]);
  }

  const Output table = run("--cache " + cache + " --sizes 256");
  ASSERT_EQ(table.code, 0) << table.text;
  EXPECT_NE(table.text.find("256x256x256 (a4-dense)"), std::string::npos) << table.text;
  EXPECT_NE(table.text.find("% peak"), std::string::npos) << table.text;
  EXPECT_NE(table.text.find("1.00x  ok"), std::string::npos) << table.text;

  const Output bad_device = run("--cache " + cache + " --sizes 64 --device 99 2>&1");
  EXPECT_EQ(bad_device.code, 1) << bad_device.text;
  EXPECT_NE(bad_device.text.find("--device 99 does not exist"), std::string::npos) << bad_device.text;
}

// --no-vendor reaches the worker processes and the lookup of what they stored: the table holds
// own kernels only, and the result is the worker's, not a second tuning with vendor candidates.
TEST(TuneCliGpu, NoVendorTunesAndReportsOwnKernelsOnly) {
  TILEMM_REQUIRE_DEVICE();
  tilemm::testing::TempDir dir;
  const Output out = run("--cache " + dir.file("cli.db") + " --shapes 2928x408x104 --no-vendor --json");
  ASSERT_EQ(out.code, 0) << out.text;
  const auto doc = nlohmann::json::parse(out.text);
  ASSERT_EQ(doc["devices"][0]["results"].size(), 1u);
  const auto& r = doc["devices"][0]["results"][0];
  EXPECT_EQ(r["source"], "tuned");
  ASSERT_FALSE(r["candidates"].empty());
  for (const auto& c : r["candidates"])
    EXPECT_NE(c["variant"].get<std::string>().rfind("cublas", 0), 0u) << c["variant"];
  EXPECT_NE(r["winner"].get<std::string>().rfind("cublas", 0), 0u) << r["winner"];
}

// TILEMM_TUNE governs gemm()'s implicit tuning; tilemm-tune is a request to tune under any value.
TEST(TuneCliGpu, TunesWhateverTilemmTuneSays) {
  TILEMM_REQUIRE_DEVICE();
  for (const char* policy : {"off", "background"}) {
    SCOPED_TRACE(policy);
    tilemm::testing::TempDir dir;
    const Output out = tilemm::testing::run_command(std::string("TILEMM_TUNE=") + policy + " " +
                                                    TILEMM_TUNE_BINARY + " --cache " +
                                                    dir.file("cli.db") + " --shapes 72x40x24 --json");
    ASSERT_EQ(out.code, 0) << out.text;
    const auto doc = nlohmann::json::parse(out.text);
    ASSERT_EQ(doc["devices"][0]["results"].size(), 1u);
    EXPECT_EQ(doc["devices"][0]["results"][0]["source"], "tuned");
  }
}

TEST(TuneCliGpu, SurvivesACandidateThatCrashesTheContextAndOneThatHangs) {
  TILEMM_REQUIRE_DEVICE();
  tilemm::testing::TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  const Output out = run("--cache " + dir.file("faulty.db") +
                             " --shapes 512x512x64 --json --watchdog-seconds 8 --exhaustive",
                         TILEMM_TUNE_FAULTY_BINARY);
  ASSERT_EQ(out.code, 0) << out.text;
  const auto doc = nlohmann::json::parse(out.text);
  const auto& result = doc["devices"][0]["results"][0];
  EXPECT_EQ(result["winner"].get<std::string>().rfind("faulty", 0), std::string::npos);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& c : result["candidates"]) by_name[c["variant"]] = c;
  ASSERT_TRUE(by_name.count("faulty_m0") && by_name.count("faulty_m1")) << result.dump(1);
  EXPECT_EQ(by_name["faulty_m0"]["status"], "launch_error");
  EXPECT_NE(by_name["faulty_m0"]["reason"].get<std::string>().find("illegal"), std::string::npos)
      << by_name["faulty_m0"].dump();
  EXPECT_EQ(by_name["faulty_m1"]["status"], "launch_error");
  EXPECT_NE(by_name["faulty_m1"]["reason"].get<std::string>().find("hung"), std::string::npos)
      << by_name["faulty_m1"].dump();
  std::size_t ok = 0;
  for (const auto& [name, c] : by_name) ok += c["status"] == "ok";
  EXPECT_GT(ok, 10u);  // everything else was still tuned
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::minutes(3));
}

}  // namespace
