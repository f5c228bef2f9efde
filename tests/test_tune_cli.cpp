// tilemm-tune on the CPU: argument parsing, exit codes, and the cache commands that need no GPU.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "row_split.hpp"
#include "kernel_sources.hpp"
#include "preloaded.hpp"
#include "provenance.hpp"
#include "sample_entry.hpp"
#include "temp_dir.hpp"
#include "text_table.hpp"
#include "timing_method.hpp"
#include "tilemm/error.hpp"
#include "tune_cli.hpp"
#include "tune_cli_run.hpp"
#include "tuning_json.hpp"
#include "tuning_store.hpp"

namespace tilemm::cli {
namespace {

using testing::run_tune;
using testing::TuneCliRun;

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

cache::StoredEntry sample(std::int64_t m) { return testing::sample_entry(m, m, m); }

TEST(TuneCliParsing, SizesAndShapes) {
  EXPECT_EQ(parse_sizes("512,1024"), (std::vector<Shape>{{512, 512, 512}, {1024, 1024, 1024}}));
  EXPECT_EQ(parse_shapes("1024x512x256,1x2x3"), (std::vector<Shape>{{1024, 512, 256}, {1, 2, 3}}));
  for (const char* bad : {"", "0", "-5", "5a", "512,", ",512", "1.5", "99999999999", "2147483648"})
    EXPECT_THROW(parse_sizes(bad), InvalidArgument) << bad;
  for (const char* bad : {"", "1x2", "1x2x3x4", "1x2x0", "ax2x3", "1x2x3,", "1X2X3"})
    EXPECT_THROW(parse_shapes(bad), InvalidArgument) << bad;
}

// Lines of `text` (without their newlines).
std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) result.push_back(line);
  return result;
}

TEST(TuneCliParsing, EveryBadSizeGetsTheSameMessage) {
  // Too long, out of range, negative, not a number: one sentence, whatever the reason.
  for (const char* bad : {"99999999999", "2147483648", "0", "-5", "abc", "1.5"}) {
    const TuneCliRun r = run_tune({"--sizes", bad});
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_EQ(r.err, std::string("tilemm-tune: error: --sizes: '") + bad +
                         "' is not an integer between 1 and 2147483647; see 'tilemm-tune --help'\n");
  }
  const TuneCliRun shape = run_tune({"--shapes", "8x99999999999x8"});
  EXPECT_EQ(shape.err, "tilemm-tune: error: --shapes: '99999999999' is not an integer between 1 and "
                       "2147483647; see 'tilemm-tune --help'\n");
}

TEST(TuneCliParsing, ErrorsNameOneProgramOnce) {
  // The library's messages start with "tilemm: "; the CLI's line must not add it to its own.
  testing::TempDir dir;
  const std::string not_a_database = dir.file("folder");
  std::filesystem::create_directory(not_a_database);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--sizes", "0"}, {"--bogus"}, {"--cache", not_a_database, "--list"},
           {"--cache", dir.file("t.db"), "--import", dir.file("missing.json")}}) {
    const TuneCliRun r = run_tune(args);
    EXPECT_NE(r.code, 0);
    EXPECT_EQ(r.err.rfind("tilemm-tune: error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find("tilemm: "), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
}

TEST(TuneCliParsing, SqliteErrorsSayTheirReasonOnce) {
  testing::TempDir dir;
  const std::string folder = dir.file("folder");
  std::filesystem::create_directory(folder);
  const TuneCliRun r = run_tune({"--cache", folder, "--list"});
  EXPECT_EQ(r.code, 1);
  const std::string reason = "unable to open database file";
  const auto first = r.err.find(reason);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(reason, first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(folder), std::string::npos) << r.err;
}

TEST(TuneCliParsing, RepeatedSizesAndShapesAddUp) {
  // The second --sizes is read (its bad value is what the error names), not refused as a repeat.
  TuneCliRun r = run_tune({"--sizes", "64", "--sizes", "65,x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sizes: 'x'"), std::string::npos) << r.err;
  r = run_tune({"--shapes", "8x8x8", "--sizes", "64", "--shapes", "1x2"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--shapes: '1x2' is not of the form MxNxK"), std::string::npos) << r.err;
  // Only values, one per occurrence: a stray word is an error, not a size.
  r = run_tune({"--sizes", "64", "128"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("128"), std::string::npos) << r.err;
}

TEST(TuneCliParsing, UsageErrorsExitTwoWithOneLineOnStderr) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"--bogus"},
           {"--sizes"},
           {"--sizes", "abc"},
           {"--shapes", "1x2"},
           {"--list", "--clear"},
           {"--sizes", "64", "--list"},
           {"--list", "--force"},
           {"--export", "x.json", "--json"},
           {"--clear", "--device-key", "k"},
           {"--sizes", "64", "--device", "first"},
           {"--arch", "sm_90"},
           {"--list", "--arch", "sm_90"},
           {"--precompile", "--arch", "90"},
           {"--precompile", "--arch", "sm_9x"},
           {"--precompile", "--list"},
           {"--sizes", "64", "--precision", "low"},
           {"--sizes", "64", "--precision"},
           {"--list", "--precision", "high"}}) {
    const TuneCliRun r = run_tune(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.code, 2) << joined << r.err;
    EXPECT_EQ(lines(r.err), 1u) << joined << r.err;
    EXPECT_EQ(r.err.rfind("tilemm-tune: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("; see 'tilemm-tune --help'\n"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << joined;
  }
}

// Each precision of a shape is an entry of its own, listed with its precision.
TEST(TuneCliCache, ListShowsEachEntrysPrecision) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  cache::StoredEntry highest = sample(512), high = sample(512);
  high.precision = Precision::high;
  high.winner = "tf32mma_bm128_bn128_bk32_wm64_wn32_st3_sp3_v4";
  for (auto& c : high.candidates)
    if (c.status == CandidateStatus::ok) c.variant = high.winner;
  {
    cache::TuningStore store(db);
    store.put_all({highest, high});
  }
  const TuneCliRun r = run_tune({"--cache", db, "--list", "--device-key", high.device_key});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto text = split_lines(r.out);
  ASSERT_GE(text.size(), 3u) << r.out;
  EXPECT_NE(text[0].find("precision"), std::string::npos) << r.out;
  std::size_t rows_high = 0, rows_highest = 0;
  for (const auto& line : text) {
    if (line.find(high.winner) != std::string::npos && line.find(" high ") != std::string::npos) ++rows_high;
    if (line.find(highest.winner) != std::string::npos && line.find(" highest ") != std::string::npos)
      ++rows_highest;
  }
  EXPECT_EQ(rows_high, 1u) << r.out;
  EXPECT_EQ(rows_highest, 1u) << r.out;
}

// A result chosen among own kernels only is a row of its own, marked "own only"; one chosen with
// vendor candidates, the usual case, is not marked.
TEST(TuneCliCache, ListMarksAResultOfOwnKernelsOnly) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  cache::StoredEntry with_vendor = sample(512), own = sample(512);
  own.candidate_set = cache::CandidateSet::own_only;
  own.winner = "naive";  // the sample's two candidates, with the other one winning
  own.candidates[0].variant = "naive";
  own.candidates[1].variant = with_vendor.winner;
  {
    cache::TuningStore store(db);
    store.put_all({with_vendor, own});
  }
  const TuneCliRun r = run_tune({"--cache", db, "--list", "--device-key", own.device_key});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto text = split_lines(r.out);
  ASSERT_GE(text.size(), 3u) << r.out;
  EXPECT_NE(text[0].find("candidates"), std::string::npos) << r.out;
  std::size_t own_rows = 0, vendor_rows = 0;
  for (const auto& line : text) {
    const bool marked = line.find("own only") != std::string::npos;
    if (line.find(" " + own.winner + " ") != std::string::npos && marked) ++own_rows;
    if (line.find(" " + with_vendor.winner + " ") != std::string::npos && !marked) ++vendor_rows;
  }
  EXPECT_EQ(own_rows, 1u) << r.out;
  EXPECT_EQ(vendor_rows, 1u) << r.out;
}

TEST(TuneCliParsing, HelpNamesThePrecisionModes) {
  const TuneCliRun r = run_tune({"--help"});
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--precision"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("highest|high|medium"), std::string::npos) << r.out;
}

// --precompile needs an architecture: the GPUs' or --arch's. (With --arch it compiles the whole
// space, minutes on a small machine: the H200 run of docs/tuning.md measures that.)
TEST(TuneCliParsing, PrecompileWithoutAGpuOrAnArchitectureSaysWhatToGive) {
  if (device_count() > 0) GTEST_SKIP() << "this machine has a GPU: --precompile would compile for it";
  testing::TempDir dir;
  const TuneCliRun r = run_tune({"--precompile", "--cache", dir.file("t.db")});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err, "tilemm-tune: error: no CUDA device (or no driver) found; give --arch sm_XY to precompile for one without it\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(TuneCliTable, StatusNamesTheReasonAndAPlansParts) {
  CandidateResult c;
  c.variant = "naive";
  EXPECT_EQ(status_text(c), "ok");
  c.status = CandidateStatus::pruned;
  c.reason = "slow";
  EXPECT_EQ(status_text(c), "pruned: slow");
  c.variant = "rowsplit_h2816";
  c.status = CandidateStatus::ok;
  c.reason = "rows 0-2815: a; rows 2816-2999: b";
  EXPECT_EQ(status_text(c), "ok: rows 0-2815: a; rows 2816-2999: b");
}

TEST(TuneCliParsing, DeviceZeroIsAValidOrdinal) {
  // In-process: inside this test binary there is no tilemm-tune to start as a worker.
  const TuneCliRun r = run_tune({"--sizes", "64", "--device", "0", "--in-process"});
  EXPECT_NE(r.code, 2) << r.err;  // not a usage error; without a GPU it fails with 1
  if (r.code == 1) {
    EXPECT_NE(r.err.find("no CUDA device"), std::string::npos) << r.err;
  }
}

TEST(TuneCliParsing, HelpAndVersionExitZero) {
  const TuneCliRun help = run_tune({"--help"});
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"--sizes", "--shapes", "--device", "--cache", "--force", "--json",
                           "--list", "--export", "--import", "--clear"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  const TuneCliRun version = run_tune({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("tilemm-tune ", 0), 0u) << version.out;
  // It names what the results hash of every entry it tunes is made of: the kernel templates and
  // the timing method.
  EXPECT_NE(version.out.find("kernel templates " + detail::templates_hash()), std::string::npos)
      << version.out;
  EXPECT_NE(version.out.find("timing method " + std::to_string(tuner::kTimingMethodVersion)),
            std::string::npos)
      << version.out;
}

TEST(TuneCliParsing, HelpShowsTheActionsExamplesExitCodesAndTheCachePath) {
  const TuneCliRun help = run_tune({"--help"});
  ASSERT_EQ(help.code, 0);
  // One synopsis line per action, and the rule that there is one per run.
  for (const char* form : {"tilemm-tune (--sizes LIST | --shapes LIST)...", "tilemm-tune --list",
                           "tilemm-tune --export FILE|-", "tilemm-tune --import FILE",
                           "tilemm-tune --clear", "Exactly one action per run"})
    EXPECT_NE(help.out.find(form), std::string::npos) << form << "\n" << help.out;
  EXPECT_NE(help.out.find("Examples:\n  tilemm-tune --sizes"), std::string::npos) << help.out;
  for (const char* code : {"Exit codes:", "  0  success", "  1  failure", "  2  usage error"})
    EXPECT_NE(help.out.find(code), std::string::npos) << code;
  EXPECT_NE(help.out.find("${XDG_CACHE_HOME:-$HOME/.cache}/tilemm/tuning.db"), std::string::npos);
  EXPECT_NE(help.out.find("--force"), std::string::npos);
  // Values are named for what they are, not for their C++ type or a validator's range.
  for (const char* name : {"--sizes LIST", "--device N|all", "--cache PATH", "--export FILE|-",
                           "--watchdog-seconds SECONDS", "--device-key KEY"})
    EXPECT_NE(help.out.find(name), std::string::npos) << name;
  for (const char* generic : {"TEXT", "FLOAT", "INT", "[OPTIONS]"})
    EXPECT_EQ(help.out.find(generic), std::string::npos) << generic << "\n" << help.out;
  // The worker protocol's options are not for users.
  for (const char* internal : {"--worker", "--skip", "--lease-owner"})
    EXPECT_EQ(help.out.find(internal), std::string::npos) << internal;
}

TEST(TuneCliTable, ColumnsAreAsWideAsTheirWidestCell) {
  TextTable table({{"name"}, {"value", TextTable::Align::right}, {"note"}}, "  ");
  table.add_row({"a_name_longer_than_the_title", "1.5", "x"});
  table.add_row({"b", "12345.25", "last column is not padded"});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(),
            "  name                             value  note\n"
            "  a_name_longer_than_the_title       1.5  x\n"
            "  b                             12345.25  last column is not padded\n");
  EXPECT_THROW(table.add_row({"1", "2", "3", "4"}), std::invalid_argument);
}

TEST(TuneCliCache, ExportImportListAndClearWithoutAGpu) {
  testing::TempDir dir;
  const std::string source = dir.file("source.db");
  const std::string target = dir.file("sub/target.db");
  {
    cache::TuningStore store(source);
    store.put_all({sample(64), sample(128)});
  }
  const std::string file = dir.file("out.json");
  TuneCliRun r = run_tune({"--cache", source, "--export", file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("exported 2 entries"), std::string::npos) << r.out;

  r = run_tune({"--cache", target, "--import", file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 2 entries"), std::string::npos) << r.out;
  {
    cache::TuningStore store(target);
    const auto entries = store.list();
    ASSERT_EQ(entries.size(), 2u);
    for (const auto& e : entries) {
      EXPECT_EQ(e.source, "imported");
      EXPECT_EQ(e.winner, "tiled_t32_p0");
      EXPECT_EQ(e.candidates.size(), 2u);
    }
  }

  r = run_tune({"--cache", target, "--list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("64x64x64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("imported"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stale"), std::string::npos) << r.out;  // another template hash
  r = run_tune({"--cache", target, "--list", "--device-key", "NVIDIA A100|sm_80|108sm|40326MiB"});
  EXPECT_EQ(r.out.find("64x64x64"), std::string::npos) << r.out;

  r = run_tune({"--cache", target, "--clear"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("removing 2 tuning entries"), std::string::npos) << r.out;
  EXPECT_TRUE(cache::TuningStore(target).list().empty());
}

TEST(TuneCliCache, ListAlignsColumnsAndShowsAPlansPartsUnderThePlan) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  const std::string long_name = "clusterk_bm128_bn128_bk16_wm32_wn64_tm4_tn4_v4_s2";  // 49 chars
  cache::StoredEntry plan = sample(3000);
  plan.winner = "rowsplit_h2816";
  CandidateResult plan_candidate;
  plan_candidate.variant = "rowsplit_h2816";
  plan_candidate.stats = {1.0, 0.9, 0.05, 20};
  plan.candidates.push_back(plan_candidate);
  cache::StoredEntry core = sample(2816), rest = sample(184), other = sample(512);
  core.N = core.K = rest.N = rest.K = 3000;
  core.winner = long_name;
  other.winner = long_name;
  {
    cache::TuningStore store(db);
    store.put_all({other, rest, core, plan});
  }
  const TuneCliRun r = run_tune({"--cache", db, "--list", "--device-key", plan.device_key});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto text = split_lines(r.out);
  ASSERT_GE(text.size(), 5u) << r.out;
  const std::string& header = text[0];
  ASSERT_EQ(header.rfind("device", 0), 0u) << r.out;
  // Every row's cells start where their titles do, however long the winner's name.
  const auto source_at = header.find("source"), tflops_end = header.find("TFLOP/s") + 7;
  std::vector<std::string> rows;
  for (std::size_t i = 1; i < text.size() && text[i].rfind("NVIDIA", 0) == 0; ++i) rows.push_back(text[i]);
  ASSERT_EQ(rows.size(), 4u) << r.out;
  for (const auto& row : rows) {
    EXPECT_EQ(row.find("imported") == std::string::npos ? row.find("tuned here") : row.find("imported"),
              source_at)
        << row;
    EXPECT_EQ(row.substr(tflops_end - 4, 4), "1.25") << row;  // right-aligned under its title
  }
  // The plan, then its parts, marked as rows of it; not as shapes of their own.
  EXPECT_NE(rows[0].find("512x512x512"), std::string::npos) << r.out;
  EXPECT_NE(rows[1].find("3000x3000x3000"), std::string::npos) << r.out;
  EXPECT_NE(rows[2].find("+ rows 0-2815, plan h2816"), std::string::npos) << r.out;
  EXPECT_NE(rows[2].find(long_name), std::string::npos) << r.out;
  EXPECT_NE(rows[3].find("+ rows 2816-2999, plan h2816"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("2816x3000x3000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("row-split plan"), std::string::npos) << r.out;  // the legend
  EXPECT_NE(r.out.find("4 entries"), std::string::npos) << r.out;
}

TEST(TuneCliCache, ABadImportChangesNothingAndNamesTheField) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  {
    cache::TuningStore store(db);
    store.put(sample(32));
  }
  // Entry 0 is fine, entry 1 is not: nothing of the file may land.
  auto doc = nlohmann::json::parse(cache::entries_to_json({sample(64), sample(96)}));
  doc["entries"][1]["median_ms"] = -3;
  const std::string file = dir.file("bad.json");
  std::ofstream(file) << doc.dump();
  const TuneCliRun r = run_tune({"--cache", db, "--import", file});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("entries[1].median_ms"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was changed"), std::string::npos) << r.err;
  const auto entries = cache::TuningStore(db).list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].M, 32);

  const TuneCliRun missing = run_tune({"--cache", db, "--import", dir.file("missing.json")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err, "tilemm-tune: error: cannot import '" + dir.file("missing.json") +
                             "': No such file or directory\n");
  EXPECT_EQ(r.err.rfind("tilemm-tune: error: cannot import '" + file + "': entries[1].median_ms: ", 0), 0u)
      << r.err;
}

// Import errors name the file and say why in plain words: no parser exception ids, no stream
// internals; nothing is written.
TEST(TuneCliCache, ImportErrorsNameTheFileAndWhyInPlainWords) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  const std::string malformed = dir.file("malformed.json");
  std::ofstream(malformed) << "{\n  \"format\": \"tilemm-tuning\",\n    x\n}\n";
  TuneCliRun r = run_tune({"--cache", db, "--import", malformed});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("tilemm-tune: error: cannot import '" + malformed + "': not valid JSON at line 3, column 5: ", 0), 0u)
      << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("syntax error"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;

  const std::string empty = dir.file("empty.json");
  std::ofstream{empty};
  r = run_tune({"--cache", db, "--import", empty});
  EXPECT_EQ(r.err, "tilemm-tune: error: cannot import '" + empty + "': not valid JSON at line 1, column 1: unexpected end of input (nothing was changed)\n");

  const std::string folder = dir.file("folder");
  std::filesystem::create_directory(folder);
  r = run_tune({"--cache", db, "--import", folder});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tilemm-tune: error: cannot import '" + folder + "': is a directory\n");
  EXPECT_FALSE(std::filesystem::exists(db));
}

// Export errors name the file the user gave (not the temporary one beside it) and the reason.
TEST(TuneCliCache, ExportErrorsNameTheFileAndWhy) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  { cache::TuningStore(db).put(sample(32)); }
  const std::string in_missing_folder = dir.file("missing/x.json");
  TuneCliRun r = run_tune({"--cache", db, "--export", in_missing_folder});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tilemm-tune: error: cannot write '" + in_missing_folder + "': No such file or directory\n");

  const std::string folder = dir.file("folder");
  std::filesystem::create_directory(folder);
  r = run_tune({"--cache", db, "--export", folder});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "tilemm-tune: error: cannot write '" + folder + "': is a directory\n");
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  EXPECT_FALSE(std::filesystem::exists(folder + ".tmp"));
}

TEST(TuneCliCache, SixteenProcessesImportingIntoOneCacheLoseNothing) {
  testing::TempDir dir;
  const std::string db = dir.file("shared.db");
  constexpr int kProcesses = 16, kEach = 10;
  for (int p = 0; p < kProcesses; ++p) {
    std::vector<cache::StoredEntry> entries;
    for (int i = 0; i < kEach; ++i) entries.push_back(sample(1 + p * kEach + i));
    std::ofstream(dir.file("part" + std::to_string(p) + ".json")) << cache::entries_to_json(entries);
  }
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const TuneCliRun r = run_tune({"--cache", db, "--import", dir.file("part" + std::to_string(p) + ".json")});
      if (r.code != 0) std::fprintf(stderr, "importer %d: %s", p, r.err.c_str());
      _exit(r.code == 0 && r.err.empty() ? 0 : 1);  // no error surfaced, not even a warning
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto all = cache::TuningStore(db).list();
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kProcesses * kEach));
  for (const auto& e : all) EXPECT_EQ(e.candidates.size(), 2u);
}

// A cache that others can write may hold anyone's CUBINs; --list says it is shared and why.
TEST(TuneCliCache, ListSaysAGroupWritableCacheIsShared) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  {
    cache::TuningStore store(db);
    store.put(sample(32));
  }
  TuneCliRun r = run_tune({"--cache", db, "--list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("shared"), std::string::npos) << r.out;

  ASSERT_EQ(::chmod(db.c_str(), 0660), 0);
  r = run_tune({"--cache", db, "--list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("shared cache: '"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("t.db' is writable by its group"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("32x32x32"), std::string::npos) << r.out;  // its results are still listed
  struct stat st {};
  ASSERT_EQ(::stat(db.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);  // listing changes no one's modes
}

TEST(TuneCliCache, ImportCreatesAnOwnerOnlyCacheWhateverTheUmask) {
  testing::TempDir dir;
  const std::string file = dir.file("in.json");
  std::ofstream(file) << cache::entries_to_json({sample(64)});
  const mode_t previous = ::umask(0);
  const TuneCliRun r = run_tune({"--cache", dir.file("new/sub/t.db"), "--import", file});
  ::umask(previous);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& [path, mode] : {std::pair<std::string, mode_t>{dir.file("new"), 0700},
                                   {dir.file("new/sub"), 0700},
                                   {dir.file("new/sub/t.db"), 0600}}) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(st.st_mode & 0777, mode) << path;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<std::string> moved_aside(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().filename().string().find(".corrupt-") != std::string::npos) out.push_back(f.path().string());
  return out;
}

// Two kinds of damage: a file that is not a database, and a database cut short.
void damage(const std::string& db, bool truncated) {
  if (!truncated) {
    std::string noise(20000, '\0');
    for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919 + 13) % 251);
    std::ofstream(db, std::ios::binary) << noise;
    return;
  }
  {
    cache::TuningStore store(db);
    std::vector<cache::StoredEntry> many;
    for (int m = 1; m <= 400; ++m) many.push_back(sample(m));
    store.put_all(many);
  }
  { cache::TuningStore checkpoint(db); }  // the last connection folds the WAL into the file
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  std::filesystem::resize_file(db, std::filesystem::file_size(db) / 3);
}

// --list and --export leave a damaged cache where it is and say, in the same words, that it is
// damaged and what the next writer will do; exit 3 tells a script their output lacks its entries.
TEST(TuneCliCache, ListAndExportOfADamagedCacheSayWhatWillHappenAndLeaveIt) {
  for (const bool truncated : {false, true}) {
    SCOPED_TRACE(truncated ? "truncated database" : "random bytes");
    testing::TempDir dir;
    const std::string db = dir.file("tuning.db");
    damage(db, truncated);
    const std::string bytes = read_file(db);
    const std::string will = "the cache '" + db + "' is damaged (";
    const std::string then = "); the next tuning, gemm() call, --import or --clear will move it aside to '" +
                             db + ".corrupt-<UTC time>' and start a fresh one";

    TuneCliRun r = run_tune({"--cache", db, "--list"});
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("tilemm-tune: error: " + will, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(then + "; only the preloaded entries were listed"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("tilemm: SQLite"), std::string::npos) << r.err;  // the reason, not the call
    // Still the preloaded entries, as without a cache.
    const auto preloaded = cache::preloaded_entries(detail::why_not_a_known_name).size();
    ASSERT_GT(preloaded, 0u);
    EXPECT_NE(r.out.find(std::to_string(preloaded) + " entries ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("preloaded"), std::string::npos);

    const std::string file = dir.file("earlier.json");
    std::ofstream(file) << "an earlier export";
    r = run_tune({"--cache", db, "--export", file});
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("tilemm-tune: error: " + will, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(then + "; nothing was exported"), std::string::npos) << r.err;
    EXPECT_EQ(read_file(file), "an earlier export");
    r = run_tune({"--cache", db, "--export", "-"});
    EXPECT_EQ(r.code, 3);
    EXPECT_TRUE(r.out.empty()) << r.out;

    EXPECT_EQ(read_file(db), bytes);  // untouched
    EXPECT_TRUE(moved_aside(dir.file("")).empty());
  }
}

// --clear and --import write, so they do what gemm() does: move the damaged file aside (kept for
// inspection), start a fresh cache, say so, and carry on.
TEST(TuneCliCache, ClearAndImportMoveADamagedCacheAsideAndCarryOn) {
  testing::TempDir dir;
  const std::string good = dir.file("good.json");
  std::ofstream(good) << cache::entries_to_json({sample(64)});
  for (const bool import : {false, true}) {
    SCOPED_TRACE(import ? "--import" : "--clear");
    const std::string db = dir.file(import ? "i/tuning.db" : "c/tuning.db");
    std::filesystem::create_directories(std::filesystem::path(db).parent_path());
    damage(db, false);
    const std::string bytes = read_file(db);
    const TuneCliRun r = import ? run_tune({"--cache", db, "--import", good}) : run_tune({"--cache", db, "--clear"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("tilemm-tune: warning: the cache '" + db + "' was damaged (file is not a database); moved it to '" + db + ".corrupt-", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("' and started a fresh one"), std::string::npos) << r.err;
    const auto aside = moved_aside(std::filesystem::path(db).parent_path().string());
    ASSERT_EQ(aside.size(), 1u);
    EXPECT_EQ(read_file(aside[0]), bytes);
    EXPECT_EQ(cache::TuningStore(db).list().size(), import ? 1u : 0u);
  }
}

// An entry with just its winner (written by hand, or by another tool) imports; tilemm-tune lists
// and exports it like any other.
TEST(TuneCliCache, ImportAcceptsEntriesWithAndWithoutCandidates) {
  testing::TempDir dir;
  const std::string db = dir.file("t.db");
  auto doc = nlohmann::json::parse(cache::entries_to_json({sample(64), sample(96)}));
  doc["entries"][0].erase("candidates");
  const std::string file = dir.file("winners.json");
  std::ofstream(file) << doc.dump();
  TuneCliRun r = run_tune({"--cache", db, "--import", file});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("imported 2 entries"), std::string::npos) << r.out;
  const auto entries = cache::TuningStore(db).list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_TRUE(entries[0].candidates.empty());
  EXPECT_EQ(entries[1].candidates.size(), 2u);

  r = run_tune({"--cache", db, "--list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("64x64x64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("96x96x96"), std::string::npos) << r.out;
  r = run_tune({"--cache", db, "--export", "-"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto exported = nlohmann::json::parse(r.out);
  EXPECT_EQ(exported["entries"][0]["candidates"], nlohmann::json::array());
  EXPECT_EQ(exported["entries"][1]["candidates"].size(), 2u);
}

// The peak memory of this process since `mark_memory()`, from the kernel's high-water mark.
void mark_memory() { std::ofstream("/proc/self/clear_refs") << "5"; }
long peak_kib_since_mark() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}
long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The growth of the resident high-water mark of a child process over `tilemm-tune --import
// file` into a new cache, after a small import of `warm_up` (so that what any import needs once,
// code, SQLite's page cache, memory the allocator keeps, is resident before the mark); -1 where
// an import failed.
long import_growth_kib(const testing::TempDir& dir, const std::string& warm_up, const std::string& file) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(pipe_fds[0]);
    const bool warm = run_tune({"--cache", dir.file("small.db"), "--import", warm_up}).code == 0;
    mark_memory();
    const long before = resident_kib();
    const TuneCliRun r = run_tune({"--cache", dir.file("large.db"), "--import", file});
    const long growth = warm && r.code == 0 ? peak_kib_since_mark() - before : -1;
    if (r.code != 0) std::fprintf(stderr, "import failed: %s", r.err.c_str());
    const ssize_t written = write(pipe_fds[1], &growth, sizeof growth);
    _exit(written == sizeof growth ? 0 : 1);
  }
  close(pipe_fds[1]);
  long growth = -1;
  const ssize_t got = read(pipe_fds[0], &growth, sizeof growth);
  close(pipe_fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || got != static_cast<ssize_t>(sizeof growth)) return -1;
  return growth;
}

// Writes a document of `count` entries, and an unknown member of `junk` numbers, which a reader
// must parse but need not keep.
void write_entries(const std::string& file, int count, long junk = 0) {
  std::ofstream out(file);
  out << "{\"entries\": [\n";
  auto one = nlohmann::json::parse(cache::entries_to_json({sample(1)}))["entries"][0];
  for (int i = 0; i < count; ++i) {
    one["m"] = i + 1;
    out << one.dump(2) << (i + 1 < count ? ",\n" : "\n");
  }
  out << "], ";
  if (junk > 0) {
    out << "\"junk\": [";
    for (long i = 0; i < junk; ++i) out << (i ? ",0" : "0");
    out << "], ";
  }
  out << "\"format\": \"tilemm-tuning\", \"format_version\": " << cache::kJsonFormatVersion << "}\n";
}

// The import streams its file: its memory does not grow with the number of entries, nor with a
// member of the document it does not know. Measured in a child process, as the growth of the
// resident high-water mark over an import of a file of over 8 MB; reading the whole file into
// memory would take several times its size. (A 200,000-entry import is timed on
// docs/benchmarks.md; it takes too long for every CI run.)
TEST(TuneCliCache, ImportMemoryDoesNotGrowWithTheFile) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer keeps freed memory in quarantine: resident size says nothing "
                  "about what the import holds (TuningJson.TheStreamingReader* cover it there)";
#endif
  if (!std::ofstream("/proc/self/clear_refs")) GTEST_SKIP() << "/proc/self/clear_refs cannot be written here";
  const std::string warm_up_name = "small.json";
  for (const auto& [entries, junk] : std::vector<std::pair<int, long>>{{20000, 0}, {500, 6000000}}) {
    SCOPED_TRACE(std::to_string(entries) + " entries, " + std::to_string(junk) + " unknown values");
    testing::TempDir dir;
    const std::string file = dir.file("large.json"), warm_up = dir.file(warm_up_name);
    write_entries(file, entries, junk);
    write_entries(warm_up, 500);
    const auto file_kib = static_cast<long>(std::filesystem::file_size(file) / 1024);
    ASSERT_GT(file_kib, 8 * 1024);
    const long growth = import_growth_kib(dir, warm_up, file);
    ASSERT_GE(growth, 0) << "the import failed";
    EXPECT_LT(growth, file_kib / 2) << "grew by " << growth << " KiB importing " << file_kib << " KiB";
    EXPECT_EQ(cache::TuningStore(dir.file("large.db")).list().size(), static_cast<std::size_t>(entries));
  }
}

}  // namespace
}  // namespace tilemm::cli
