// Per-problem staleness (src/core/family_fingerprint.hpp, src/dispatch/provenance.hpp): a stored
// result is versioned by the families that can run its problem, so a family that is added or
// whose template changes makes stale exactly the stored entries of the shapes it can run, and
// leaves every other entry fresh. CPU only: synthetic device, SQLite in memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "family_fingerprint.hpp"
#include "fnv1a.hpp"
#include "family_registry.hpp"
#include "kernel_sources.hpp"
#include "provenance.hpp"
#include "shape_key.hpp"
#include "synthetic_device.hpp"
#include "timing_method.hpp"
#include "tuning_store.hpp"

namespace tilemm::dispatch {
namespace {

using testing::synthetic_h200;

const std::uint64_t kL2 = synthetic_h200().l2_bytes;

// Shapes of every kind: vectors both ways (what gemvn and gemvm serve), small and large squares,
// odd sizes (alignment class 1), strided leading dimensions, at two precisions.
std::vector<Problem> problems() {
  std::vector<Problem> out;
  const std::int64_t shapes[][3] = {{1, 4096, 4096}, {8, 4096, 1024},  {16, 512, 512},
                                    {4096, 1, 4096}, {4096, 4, 512},   {4096, 8, 4096},
                                    {512, 512, 512}, {4096, 4096, 16}, {4097, 4097, 4097},
                                    {3000, 6, 3000}};
  for (const auto& s : shapes)
    for (const int alignment : {4, 1})
      for (const Precision precision : {Precision::highest, Precision::high}) {
        Problem p = Problem::dense(s[0], s[1], s[2], alignment);
        p.precision = precision;
        Problem strided = p;  // the same shape in a larger matrix: class "aN-strided"
        strided.lda += 64;
        strided.ldb += 64;
        strided.ldc += 64;
        // Problem::dense lowers the class where the leading dimensions allow no better (N = 1
        // is class 1 whatever was asked): each problem once.
        for (const Problem& q : {p, strided})
          if (std::none_of(out.begin(), out.end(), [&](const Problem& o) {
                return describe(o) == describe(q);
              }))
            out.push_back(q);
      }
  return out;
}

cache::StoredEntry tuned_entry(const DeviceInfo& device, const Problem& p) {
  cache::StoredEntry e;
  e.device_key = device.model_key();
  e.M = p.M;
  e.N = p.N;
  e.K = p.K;
  e.problem_class = class_of(p);
  e.precision = p.precision;
  e.winner = "naive";
  e.median_ms = 1.0;
  e.tuned_at = "2026-12-01T00:00:00Z";
  e.tilemm_version = "test";
  e.versions = running_versions(device, p);
  e.arch = device.arch();
  return e;
}

// What a test's family serves: N <= 8 at alignment class 4, at FP32 (so at every precision).
std::string narrow_problem(const Variant&, const Problem& p) {
  return p.N <= 8 ? "" : "narrowtest serves N <= 8";
}
int narrow_alignment(const Variant&) { return 4; }
detail::LaunchGeometry narrow_geometry(const Variant&, const Problem& p) {
  return detail::grid_over_c(p.M, p.N, 64, 8, 64, 1);
}
std::size_t narrow_shared_bytes(const Variant&) { return 0; }

bool narrow_can_run(const Problem& p) { return p.N <= 8 && p.alignment >= 4; }

// The hash of an entry, the way the lookup of its problem, the fallback and the history (the
// entry's own problem, problem_of) and tilemm-tune --list (no device: its architecture) compute
// it: all one rule.
TEST(PerProblemStaleness, EveryPathComputesOneHashPerProblem) {
  const DeviceInfo device = synthetic_h200();
  cache::TuningStore store(":memory:");
  for (const Problem& p : problems()) store.put(tuned_entry(device, p));
  const auto listed = store.list(device.model_key());
  ASSERT_EQ(listed.size(), problems().size());
  for (const auto& e : listed) {
    const Problem p = problem_of(e);
    EXPECT_EQ(e.versions.template_hash, running_versions(device, e).template_hash) << e.problem_class;
    EXPECT_EQ(e.versions.template_hash, running_versions(device, p).template_hash);
    EXPECT_EQ(e.versions.template_hash, running_versions_here(e).template_hash);
    EXPECT_EQ(e.versions.template_hash.size(), 16u);
    EXPECT_TRUE(is_fresh(e, running_versions(device, e)));
  }
  // Problems that different families serve get different hashes.
  EXPECT_NE(results_hash(Problem::dense(4096, 1, 4096), 90, kL2),
            results_hash(Problem::dense(4096, 4096, 4096), 90, kL2));
  EXPECT_NE(results_hash(Problem::dense(1, 4096, 4096), 90, kL2),
            results_hash(Problem::dense(4096, 1, 4096), 90, kL2));
}

// A changed template (here: the digest its family's kernels are versioned by) changes the hash of
// exactly the problems that family can run: gemvm's of M <= 16, tf32wgmma's only of precision high
// on sm_90 (it computes at high and medium, and is built for sm_90a alone), of no highest one.
TEST(PerProblemStaleness, AChangedTemplateChangesOnlyTheHashesOfProblemsItsFamilyCanRun) {
  for (const char* changed : {"gemvm", "tf32wgmma", "warptile"}) {
    const auto digest = [&](const detail::Family& f) -> std::string_view {
      return f.name == changed ? std::string_view("changed")
                               : detail::find_template(f.template_file).sha256;
    };
    int moved = 0, kept = 0;
    for (const int cc : {80, 90})
      for (const Problem& p : problems()) {
        const bool runs = detail::family_can_serve(detail::find_family(changed), p, cc);
        const bool differs =
            detail::kernels_fingerprint(p, cc, digest) != detail::kernels_fingerprint(p, cc);
        EXPECT_EQ(differs, runs) << changed << " " << describe(p) << " cc " << cc;
        ++(differs ? moved : kept);
        if (std::string(changed) == "gemvm") {
          EXPECT_EQ(runs, p.M <= 16) << describe(p);
        }
        if (std::string(changed) == "tf32wgmma" && runs) {
          EXPECT_TRUE(cc == 90 && p.precision == Precision::high) << describe(p);
        }
      }
    EXPECT_GT(moved, 0) << changed;
    if (std::string(changed) != "warptile") {
      EXPECT_GT(kept, 0) << changed;
    }
  }
  // A family's template covers the headers it pulls in: gemvn.cu's and gemvm.cu's digests differ
  // although both are mostly skinny.cuh.
  EXPECT_NE(detail::find_template("gemvn.cu").sha256, detail::find_template("gemvm.cu").sha256);
}

// A family registered by a test (register_extra_family, as a trial family's two files are) makes
// stale the stored entries of the shapes it can run and no other: the entries stored before its
// registration, in the cache and preloaded alike.
TEST(PerProblemStaleness, ANewFamilyStalesExactlyTheEntriesOfTheShapesItCanRun) {
  const DeviceInfo device = synthetic_h200();
  std::vector<cache::StoredEntry> before;
  for (const Problem& p : problems()) before.push_back(tuned_entry(device, p));

  detail::Family narrow;
  narrow.name = "narrowtest";
  narrow.template_file = "narrowtest.cu";
  narrow.params = {{"w", "WIDTH", {8}}};
  narrow.check_problem = narrow_problem;
  narrow.required_alignment = narrow_alignment;
  narrow.geometry = narrow_geometry;
  narrow.shared_bytes = narrow_shared_bytes;
  detail::register_extra_family(
      narrow, detail::EmbeddedTemplate{"narrowtest.cu", "// never compiled", "narrowtest digest"});

  int stale = 0, fresh = 0;
  for (std::size_t i = 0; i < before.size(); ++i) {
    const Problem p = problems()[i];
    for (const std::string source : {"tuned", "preloaded"}) {
      cache::StoredEntry e = before[i];
      e.source = source;
      const bool expected_stale = narrow_can_run(p);
      EXPECT_EQ(!is_fresh(e, running_versions(device, p)), expected_stale)
          << describe(p) << " " << source;
      EXPECT_EQ(!is_fresh(e, running_versions(device, e)), expected_stale) << describe(p);
      ++(expected_stale ? stale : fresh);
    }
  }
  EXPECT_GT(stale, 0);
  EXPECT_GT(fresh, 0);
  // An entry tuned now, with the family, is fresh again.
  for (const Problem& p : problems())
    EXPECT_TRUE(is_fresh(tuned_entry(device, p), running_versions(device, p))) << describe(p);
}

// The timing method's version is per input mode (tuner/timing_method.hpp): a result stored when
// both modes carried version 2 stays fresh where its problem is timed rotated, and is stale where
// it is timed on the same buffers, whose method changed (the finalists also timed rotated). The
// same problem on a device whose L2 is too small to hold it is timed rotated, and its old entry
// is fresh there.
TEST(PerProblemStaleness, AChangedSameBuffersMethodStalesOnlySameBuffersResults) {
  const DeviceInfo device = synthetic_h200();
  const auto stored_under_version_2 = [&](const Problem& p) {
    cache::StoredEntry e = tuned_entry(device, p);
    e.versions.template_hash = detail::fnv1a_hex(detail::kernels_fingerprint(p, 90) +
                                                 ";timing method 2");
    return e;
  };
  const Problem same_buffers = Problem::dense(512, 512, 512, 4);
  const Problem rotated = Problem::dense(4096, 4096, 4096, 4);
  ASSERT_EQ(tuner::input_mode(same_buffers, kL2), tuner::InputMode::same_buffers);
  ASSERT_EQ(tuner::input_mode(rotated, kL2), tuner::InputMode::rotated);
  EXPECT_FALSE(is_fresh(stored_under_version_2(same_buffers), running_versions(device, same_buffers)));
  EXPECT_TRUE(is_fresh(stored_under_version_2(rotated), running_versions(device, rotated)));
  // What this build stores for either is fresh, and the two modes' hashes differ.
  EXPECT_TRUE(is_fresh(tuned_entry(device, same_buffers), running_versions(device, same_buffers)));
  EXPECT_NE(results_hash(same_buffers, 90, kL2), results_hash(same_buffers, 90, 1 << 20));
  DeviceInfo small_l2 = device;
  small_l2.l2_bytes = 1 << 20;
  EXPECT_TRUE(is_fresh(stored_under_version_2(same_buffers), running_versions(small_l2, same_buffers)));
  // Without a GPU of the model here (tilemm-tune --list) the input mode is unknown: the running
  // hash is whichever mode's the entry carries, the rotated one where it carries neither.
  const cache::StoredEntry tuned = tuned_entry(device, same_buffers);
  EXPECT_EQ(running_versions_here(tuned).template_hash, tuned.versions.template_hash);
  cache::StoredEntry other = tuned;
  other.versions.template_hash = "0123456789abcdef";
  EXPECT_EQ(running_versions_here(other).template_hash, results_hash(same_buffers, 90, 1 << 20));
}

// The hash is on the lookup path of a new shape (and the background policy must not block): the
// first computation for a shape walks the families' spaces once, later ones read the memo.
TEST(PerProblemStaleness, TheHashOfANewShapeIsCheapAndMemoized) {
  results_hash(Problem::dense(7, 7, 7), 90, kL2);  // the spaces, listed once per process
  constexpr int kShapes = 200;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1; i <= kShapes; ++i) results_hash(Problem::dense(i, 3 * i + 1, 1000 + i), 90, kL2);
  const double per_shape_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
      kShapes;
  std::printf("results hash of a new shape: %.4f ms\n", per_shape_ms);
  // Generous, for sanitizer builds on a loaded machine; the report line above is the measurement.
  EXPECT_LT(per_shape_ms, 5.0);
  const Problem p = Problem::dense(1234, 5, 678);
  EXPECT_EQ(results_hash(p, 90, kL2), results_hash(p, 90, kL2));
}

}  // namespace
}  // namespace tilemm::dispatch
