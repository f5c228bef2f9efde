// The tuner's input mode (tuner/timing_method.hpp): which problems GpuBench times on the same
// buffers every launch (L2-warm) and which on rotated copies (L2-cold), and how many input sets
// it allocates for each. On a synthetic H200, without a GPU.
#include <gtest/gtest.h>

#include <cstdint>

#include "synthetic_device.hpp"
#include "timing_method.hpp"

namespace tilemm {
namespace {

using tuner::input_mode;
using tuner::input_set_count;
using tuner::InputMode;
using tuner::working_set_bytes;

const std::uint64_t kL2 = testing::synthetic_h200().l2_bytes;

Problem strided(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t ld) {
  Problem p = Problem::dense(M, N, K, 1);
  p.lda = p.ldb = p.ldc = ld;
  return p;
}

TEST(WorkingSet, CountsTheElementsOfABAndCThatACallTouches) {
  EXPECT_EQ(working_set_bytes(Problem::dense(3, 5, 7)), (3u * 7 + 7 * 5 + 3 * 5) * sizeof(float));
  // Padding past each row is not touched: the leading dimensions do not count.
  EXPECT_EQ(working_set_bytes(strided(3, 5, 7, 4096)), working_set_bytes(Problem::dense(3, 5, 7)));
}

// 1024 x 1024 x K touches (2048 K + 1024^2) floats: with the synthetic L2, K = 3328 is exactly
// half of it.
TEST(InputMode, TheSameBuffersUpToHalfTheL2AndRotatedAbove) {
  const Problem at_half = Problem::dense(1024, 1024, 3328);
  ASSERT_EQ(working_set_bytes(at_half), kL2 / 2);
  EXPECT_EQ(input_mode(at_half, kL2), InputMode::same_buffers);
  EXPECT_EQ(input_mode(Problem::dense(1024, 1024, 3327), kL2), InputMode::same_buffers);
  EXPECT_EQ(input_mode(Problem::dense(1024, 1024, 3329), kL2), InputMode::rotated);
  // The sizes on the H200: 1000^3 and 1024^3 (12 MiB) fit, 2048^3 (48 MiB) and up do not.
  EXPECT_EQ(input_mode(Problem::square(1000), kL2), InputMode::same_buffers);
  EXPECT_EQ(input_mode(Problem::square(1024), kL2), InputMode::same_buffers);
  EXPECT_EQ(input_mode(Problem::square(2048), kL2), InputMode::rotated);
  EXPECT_EQ(input_mode(Problem::square(8192), kL2), InputMode::rotated);
}

TEST(InputMode, AProblemWhoseAAloneExceedsTheL2IsRotated) {
  const Problem tall = Problem::dense(8192, 1, 8192);  // A is 256 MiB, B and C 32 KiB each
  ASSERT_GT(std::uint64_t{8192} * 8192 * sizeof(float), kL2);
  EXPECT_EQ(input_mode(tall, kL2), InputMode::rotated);
}

TEST(InputMode, LeadingDimensionsDoNotDecideOnlyTheTouchedElementsDo) {
  // 1000^3 in rows 8192 floats apart: the allocations exceed the L2, the working set does not.
  EXPECT_EQ(input_mode(strided(1000, 1000, 1000, 8192), kL2), InputMode::same_buffers);
}

TEST(InputMode, AnUnknownL2RotatesEvenAnEmptyProblem) {
  EXPECT_EQ(input_mode(Problem::dense(1, 1, 1), 0), InputMode::rotated);
  EXPECT_EQ(input_mode(Problem::dense(0, 0, 0), 0), InputMode::rotated);
}

TEST(InputMode, HasANameForTheLog) {
  EXPECT_STREQ(tuner::input_mode_name(InputMode::same_buffers), "same buffers");
  EXPECT_STREQ(tuner::input_mode_name(InputMode::rotated), "rotated");
}

// What GpuBench allocates (it calls input_set_count): one set where the mode is the same
// buffers, several copies exceeding the L2 three times where it rotates, within 2 GiB.
TEST(InputSetCount, OneSetForTheSameBuffersEnoughToExceedTheL2WhenRotated) {
  EXPECT_EQ(input_set_count(Problem::square(1000), kL2), 1u);
  EXPECT_EQ(input_set_count(Problem::dense(1024, 1024, 3328), kL2), 1u);
  // 2048^3: 48 MiB a set, ceil(3 x 60 / 48) = 4 sets.
  EXPECT_EQ(input_set_count(Problem::square(2048), kL2), 4u);
  // Just above half the L2 (30 MiB a set): ceil(180 / 30.0...) = 6 sets.
  EXPECT_EQ(input_set_count(Problem::dense(1024, 1024, 3329), kL2), 6u);
  // One set is already larger than three L2s.
  EXPECT_EQ(input_set_count(Problem::square(8192), kL2), 1u);
}

TEST(InputSetCount, RotatedSetsAreSizedByTheirAllocationsAndCappedInMemory) {
  // A strided problem with a working set above half the L2 rotates through sets of its
  // allocation's size: 2000^3 in rows of 2048 floats, 46.875 MiB a set, ceil(180 / 46.875) = 4.
  EXPECT_EQ(input_set_count(strided(2000, 2000, 2000, 2048), kL2), 4u);
  // A 1 GiB L2 and 7000^3 (561 MiB a set): three L2s would take 6 sets, 2 GiB allows 3.
  EXPECT_EQ(input_set_count(Problem::square(7000), std::uint64_t{1} << 30), 3u);
  // An unknown L2: rotated, through one set.
  EXPECT_EQ(input_set_count(Problem::square(64), 0), 1u);
}

}  // namespace
}  // namespace tilemm
