// `rlwb profile diff`: contexts ranked by the change of their self time per
// step, normalised by each run's profiled steps; added and removed contexts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile/profile_diff.h"
#include "tests/core/profile/profile_fixtures.h"

#include <cmath>

namespace rlwb::core::profile {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using namespace fixtures;

const ContextChange* change_of(const ProfileDiff& d, const std::string& path) {
  for (const ContextChange& c : d.changes)
    if (c.path == path) return &c;
  return nullptr;
}

TEST(ProfileDiff, SameWorkOverMoreStepsIsNoChange) {
  ProfileShape longer;
  longer.steps = 8;
  const ProfileDiff d = diff(grpo_profile(), grpo_profile(longer));
  EXPECT_EQ(d.steps_a, 4);
  EXPECT_EQ(d.steps_b, 8);
  EXPECT_TRUE(d.changes.empty()) << format_profile_diff(d);
  EXPECT_THAT(format_profile_diff(d), HasSubstr("no context changed"));
}

TEST(ProfileDiff, RanksByChangePerStepWithBothValuesAndTheRatio) {
  ProfileShape slower;
  slower.steps = 8;
  slower.tree.generate_op_ns = 400'000;  // aten::add under generate twice as slow
  const ProfileDiff d = diff(grpo_profile(), grpo_profile(slower));
  ASSERT_FALSE(d.changes.empty());
  const ContextChange& top = d.changes.front();
  EXPECT_EQ(top.path, "gen/generate/aten::add");
  // 40 adds of 0.2 ms per call, two workers: 16 ms a step, then 32 ms.
  EXPECT_NEAR(top.a_s, 0.016, 1e-9);
  EXPECT_NEAR(top.b_s, 0.032, 1e-9);
  EXPECT_NEAR(top.ratio(), 2.0, 1e-9);
  const std::string text = format_profile_diff(d);
  EXPECT_THAT(text, ContainsRegex("\\+16\\.0 ms +16\\.0 ms +32\\.0 ms +2\\.00x +gen/generate/aten::add\n"));
}

TEST(ProfileDiff, ContextsInOneRunOnlyAreAddedOrRemoved) {
  ProfileShape with_copies;
  with_copies.tree.copy_ns = 30'000'000;
  const ProfileDiff d = diff(grpo_profile(), grpo_profile(with_copies));
  const ContextChange* added = change_of(d, "update/update/aten::linear/aten::contiguous");
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(added->presence, ContextChange::Presence::added);
  EXPECT_TRUE(std::isinf(added->ratio()));
  const ProfileDiff back = diff(grpo_profile(with_copies), grpo_profile());
  const ContextChange* removed = change_of(back, "update/update/aten::linear/aten::contiguous/aten::copy_");
  ASSERT_NE(removed, nullptr);
  EXPECT_EQ(removed->presence, ContextChange::Presence::removed);
  EXPECT_THAT(format_profile_diff(back, 0), HasSubstr("removed"));
  EXPECT_THAT(format_profile_diff(d, 1), HasSubstr("more changed contexts (--top 0 shows all)"));
}

}  // namespace
}  // namespace rlwb::core::profile
