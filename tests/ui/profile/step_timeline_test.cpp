// One step's timeline as layout: lanes in start order with a bar per rank
// from dispatch to reply and the compute inside it, the critical path's
// nodes marked, and each pool's idle time as the gaps between its nodes.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/core/profile/profile_fixtures.h"
#include "ui/profile/step_timeline.h"

namespace rlwb::ui {
namespace {

using namespace core::profile::fixtures;

const NodeLane& lane_of(const StepTimelineLayout& t, const std::string& node) {
  auto it = std::find_if(t.lanes.begin(), t.lanes.end(), [&](const NodeLane& l) { return l.node == node; });
  EXPECT_NE(it, t.lanes.end()) << node;
  return *it;
}

TEST(StepTimeline, RankBarsRunFromDispatchToReplyWithTheComputeSolidInside) {
  StepShape shape;
  shape.gen.compute = {0.30, 0.45};
  const StepTimelineLayout t = layout_step_timeline(grpo_step(3, 10.0, shape));
  EXPECT_EQ(t.step, 3);
  ASSERT_EQ(t.lanes.size(), 5u);
  EXPECT_EQ(t.lanes.front().node, "gen");  // times from the step's first node
  EXPECT_DOUBLE_EQ(t.lanes.front().start, 0);
  const NodeLane& gen = lane_of(t, "gen");
  ASSERT_EQ(gen.ranks.size(), 2u);
  EXPECT_NEAR(gen.ranks[0].end, 0.002 + 0.30 + 0.002, 1e-9);
  EXPECT_NEAR(gen.ranks[1].end, 0.002 + 0.45 + 0.002, 1e-9);
  EXPECT_NEAR(gen.ranks[1].compute_start, 0.002, 1e-9);
  EXPECT_NEAR(gen.ranks[1].compute_end, 0.452, 1e-9);
  EXPECT_NEAR(gen.end, 0.454 + 0.001, 1e-9);  // collect after the slowest reply
  // The lanes come in start order (reward and ref both start when gen ends).
  for (size_t i = 1; i < t.lanes.size(); ++i) EXPECT_LE(t.lanes[i - 1].start, t.lanes[i].start);
  // A controller-local node is one bar, its compute.
  const NodeLane& reward = lane_of(t, "reward");
  ASSERT_EQ(reward.ranks.size(), 1u);
  EXPECT_NEAR(reward.ranks[0].compute_end - reward.ranks[0].compute_start, 0.02, 1e-9);
}

TEST(StepTimeline, TheCriticalPathsNodesAreMarked) {
  const StepTimelineLayout t = layout_step_timeline(grpo_step(1, 0, StepShape{}));
  EXPECT_EQ(t.critical_path, (std::vector<std::string>{"gen", "ref", "adv", "update"}));
  EXPECT_TRUE(lane_of(t, "gen").critical);
  EXPECT_TRUE(lane_of(t, "ref").critical);
  EXPECT_TRUE(lane_of(t, "update").critical);
  EXPECT_FALSE(lane_of(t, "reward").critical);
}

TEST(StepTimeline, APoolsIdleTimeIsTheGapsBetweenItsNodes) {
  StepShape shape;
  shape.ref_pool = "ref";
  const StepTimelineLayout t = layout_step_timeline(grpo_step(1, 0, shape));
  ASSERT_EQ(t.pools.size(), 2u);
  const PoolActivity& main = t.pools[0];
  const PoolActivity& ref = t.pools[1];
  EXPECT_EQ(main.pool, "main");
  EXPECT_EQ(ref.pool, "ref");
  const NodeLane& gen = lane_of(t, "gen");
  const NodeLane& update = lane_of(t, "update");
  const NodeLane& ref_lane = lane_of(t, "ref");
  // main runs gen and update; between them it waits for ref and adv.
  ASSERT_EQ(main.idle.size(), 1u);
  EXPECT_NEAR(main.idle[0].first, gen.end, 1e-9);
  EXPECT_NEAR(main.idle[0].second, update.start, 1e-9);
  EXPECT_NEAR(main.idle_s, update.start - gen.end, 1e-9);
  // ref works only during its node: idle before and after.
  ASSERT_EQ(ref.idle.size(), 2u);
  EXPECT_NEAR(ref.idle_s, t.length_s - (ref_lane.end - ref_lane.start), 1e-9);
}

}  // namespace
}  // namespace rlwb::ui
