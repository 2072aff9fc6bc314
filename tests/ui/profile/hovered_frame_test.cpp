// What the icicle's tooltip (and the state dump) says of a frame: calls,
// total and self wall time in all and per step, CPU, bytes, shapes,
// counters only when measured, and in diff mode both runs' values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/core/profile/profile_fixtures.h"
#include "ui/profile/icicle_layout.h"
#include "ui/profile/icicle_view.h"

namespace rlwb::ui {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace core::profile::fixtures;

std::string all_lines(const HoveredFrame& f) {
  std::string text;
  for (const auto& line : hovered_frame_lines(f)) text += line + "\n";
  return text;
}

TEST(HoveredFrame, SaysCallsTimesBytesAndShapesPerStep) {
  const auto tree = grpo_profile().merged_tree();
  const auto* softmax = find_frame(tree, {"ref", "log_probs", "aten::softmax"});
  ASSERT_TRUE(softmax);
  const HoveredFrame h = describe_frame(*softmax, "ref/log_probs/aten::softmax", 4, nullptr);
  EXPECT_EQ(h.kind, "op");
  EXPECT_EQ(h.metrics.calls, 64);  // 8 a step x 4 steps x 2 workers
  const std::string text = all_lines(h);
  EXPECT_THAT(text, HasSubstr("op: ref/log_probs/aten::softmax"));
  EXPECT_THAT(text, HasSubstr("calls: 64"));
  EXPECT_THAT(text, HasSubstr("total wall: 160 ms (40.0 ms per step)"));
  EXPECT_THAT(text, HasSubstr("self wall: 160 ms (40.0 ms per step)"));
  EXPECT_THAT(text, HasSubstr("shape [8,64]: 64 calls"));
  EXPECT_THAT(text, HasSubstr("bytes: 16.0 KiB self"));
  EXPECT_THAT(text, Not(HasSubstr("cycles")));  // -1: not measured
  EXPECT_THAT(text, Not(HasSubstr("run A")));
}

TEST(HoveredFrame, InDiffModeGivesBothRunsSelfTimePerStep) {
  ProfileShape copies;
  copies.tree.copy_ns = 30'000'000;
  const auto a = grpo_profile(copies);
  const IcicleDiff diff(a, grpo_profile(), "");
  const auto tree = a.merged_tree();
  const auto* mm = find_frame(tree, {"update", "update", "aten::linear", "aten::mm"});
  ASSERT_TRUE(mm);
  const HoveredFrame h = describe_frame(*mm, "update/update/aten::linear/aten::mm", 4, &diff);
  ASSERT_TRUE(h.change);
  EXPECT_THAT(hovered_frame_lines(h), Contains("self per step: run A 138 ms, run B 198 ms"));
  EXPECT_THAT(hovered_frame_lines(h), Contains("change: -60.0 ms (0.70x)"));
}

}  // namespace
}  // namespace rlwb::ui
