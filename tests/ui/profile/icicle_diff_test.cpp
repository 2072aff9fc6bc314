// Diff mode's numbers and colours: run B is the baseline, so a context
// that takes longer in the run shown (A) is red, a shorter one blue, one
// within the noise grey; a context only in A is fully red; a worker filter
// diffs only those workers' trees.
#include <gtest/gtest.h>

#include "tests/core/profile/profile_fixtures.h"
#include "ui/profile/icicle_diff.h"

namespace rlwb::ui {
namespace {

using core::profile::fixtures::grpo_profile;
using core::profile::fixtures::ProfileShape;

TEST(IcicleDiff, ShadeIsRedWhenRunAIsSlowerBlueWhenFasterGreyWithinTheNoise) {
  EXPECT_GT(diff_shade({0.2, 0.1, false}), 0.4);    // A twice as slow
  EXPECT_LT(diff_shade({0.1, 0.2, false}), -0.4);   // A twice as fast
  EXPECT_EQ(diff_shade({0.101, 0.1, false}), 0.0);  // 1%: noise
  EXPECT_EQ(diff_shade({0, 0, false}), 0.0);
  EXPECT_EQ(diff_shade({0.05, 0, true}), 1.0);  // only in A
  EXPECT_DOUBLE_EQ(diff_shade({0.3, 0.1, false}), -diff_shade({0.1, 0.3, false}));
}

TEST(IcicleDiff, RunBIsTheBaselineAndUnchangedPathsKeepRunAsValue) {
  ProfileShape copies;
  copies.tree.copy_ns = 30'000'000;  // A copies an operand under aten::linear; mm gets 30 ms less
  auto a = grpo_profile(copies);
  auto b = grpo_profile();
  a.run = 7;
  b.run = 3;
  const IcicleDiff d(a, b, "");
  EXPECT_EQ(d.run_a(), 7);
  EXPECT_EQ(d.run_b(), 3);
  // Two workers, 4 steps in two windows: per step, summed over the workers.
  const PathChange mm = d.at("update/update/aten::linear/aten::mm", -1);
  EXPECT_NEAR(mm.a_s, 2 * 0.069, 1e-9);
  EXPECT_NEAR(mm.b_s, 2 * 0.099, 1e-9);
  EXPECT_LT(diff_shade(mm), 0);  // faster in A: blue
  const PathChange contiguous = d.at("update/update/aten::linear/aten::contiguous", -1);
  EXPECT_TRUE(contiguous.only_in_a);
  EXPECT_EQ(diff_shade(contiguous), 1.0);
  const PathChange same = d.at("gen/generate", 0.25);  // left out by the diff: unchanged
  EXPECT_EQ(same.a_s, 0.25);
  EXPECT_EQ(same.b_s, 0.25);
  EXPECT_EQ(d.only_in_b(), 0u);
  // The other way round, the copy (aten::contiguous and its aten::copy_) is
  // only in B: A's icicle cannot draw them.
  EXPECT_EQ(IcicleDiff(b, a, "").only_in_b(), 2u);
}

TEST(IcicleDiff, AWorkerFilterDiffsOnlyThoseWorkers) {
  ProfileShape copies;
  copies.tree.copy_ns = 30'000'000;
  const IcicleDiff d(grpo_profile(copies), grpo_profile(), "main/0");
  const PathChange mm = d.at("update/update/aten::linear/aten::mm", -1);
  EXPECT_NEAR(mm.a_s, 0.069, 1e-9);
  EXPECT_NEAR(mm.b_s, 0.099, 1e-9);
  EXPECT_EQ(with_workers(grpo_profile(), "main/1").workers.size(), 2u);  // one per window
  EXPECT_EQ(with_workers(grpo_profile(), "").workers.size(), 4u);
}

}  // namespace
}  // namespace rlwb::ui
