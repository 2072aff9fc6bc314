// The icicle's layout and search on a synthetic profile (the fixtures of
// the profile readers' tests): widths are inclusive wall time, longest
// first; a zoom makes its frame the full width under its ancestors; a zoom
// the tree lacks is cut back; narrow frames drop out; search counts what
// it matches under the focus.
#include <gtest/gtest.h>

#include "tests/core/profile/profile_fixtures.h"
#include "ui/profile/icicle_layout.h"

namespace rlwb::ui {
namespace {

using core::profile::fixtures::grpo_profile;

const IcicleBox* box_at(const IcicleLayout& layout, const std::string& path) {
  for (const IcicleBox& b : layout.boxes)
    if (b.path == path) return &b;
  return nullptr;
}

TEST(IcicleLayout, WidthsAreInclusiveWallTimeLongestFirst) {
  const auto tree = grpo_profile().merged_tree();
  const IcicleLayout layout = layout_icicle(tree, {}, 0);
  ASSERT_FALSE(layout.boxes.empty());
  EXPECT_EQ(layout.boxes.front().path, "");  // the root spans the width
  EXPECT_DOUBLE_EQ(layout.boxes.front().x1 - layout.boxes.front().x0, 1.0);
  const IcicleBox* update = box_at(layout, "update");
  const IcicleBox* ref = box_at(layout, "ref");
  const IcicleBox* gen = box_at(layout, "gen");
  ASSERT_TRUE(update && ref && gen);
  // Per worker and step: update 240 ms, ref 90 ms, gen 68 ms (60 ms + 40 x 0.2 ms).
  EXPECT_NEAR(update->x1 - update->x0, 240.0 / 398.0, 1e-9);
  EXPECT_NEAR(ref->x1 - ref->x0, 90.0 / 398.0, 1e-9);
  EXPECT_DOUBLE_EQ(update->x0, 0);
  EXPECT_DOUBLE_EQ(ref->x0, update->x1);
  EXPECT_DOUBLE_EQ(gen->x0, ref->x1);
  EXPECT_EQ(update->depth, 1);
  const IcicleBox* mm = box_at(layout, "update/update/aten::linear/aten::mm");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->depth, 4);
  EXPECT_EQ(layout.rows, 5);
}

TEST(IcicleLayout, AZoomMakesItsFrameTheFullWidthUnderItsAncestors) {
  const auto tree = grpo_profile().merged_tree();
  const IcicleLayout layout = layout_icicle(tree, {"update", "update"}, 0);
  EXPECT_EQ(layout.focus_path, (std::vector<std::string>{"update", "update"}));
  ASSERT_GE(layout.boxes.size(), 3u);
  EXPECT_TRUE(layout.boxes[0].ancestor);  // root
  EXPECT_TRUE(layout.boxes[1].ancestor);  // update (the node)
  EXPECT_FALSE(layout.boxes[2].ancestor);
  EXPECT_EQ(layout.boxes[2].path, "update/update");
  EXPECT_DOUBLE_EQ(layout.boxes[2].x1 - layout.boxes[2].x0, 1.0);
  const IcicleBox* linear = box_at(layout, "update/update/aten::linear");
  ASSERT_TRUE(linear);
  EXPECT_NEAR(linear->x1 - linear->x0, 100.0 / 240.0, 1e-9);
  EXPECT_EQ(box_at(layout, "gen"), nullptr);  // beside the focus: not drawn
  // Zooming in on a box is the names from the node down to it.
  const size_t index = static_cast<size_t>(linear - layout.boxes.data());
  EXPECT_EQ(focus_of(layout, index), (std::vector<std::string>{"update", "update", "aten::linear"}));
  EXPECT_TRUE(focus_of(layout, 0).empty());
}

TEST(IcicleLayout, AZoomTheTreeLacksIsCutWhereItStopsMatching) {
  const auto tree = grpo_profile().merged_tree();
  const IcicleLayout layout = layout_icicle(tree, {"update", "no-such-method", "aten::mm"}, 0);
  EXPECT_EQ(layout.focus_path, (std::vector<std::string>{"update"}));
  EXPECT_EQ(layout.focus->name, "update");
}

TEST(IcicleLayout, FramesNarrowerThanTheMinimumAreLeftOutWithTheirChildren) {
  const auto tree = grpo_profile().merged_tree();
  const IcicleLayout layout = layout_icicle(tree, {}, 0.3);  // only update (60%) is wider
  EXPECT_TRUE(box_at(layout, "update"));
  EXPECT_FALSE(box_at(layout, "ref"));
  EXPECT_FALSE(box_at(layout, "ref/log_probs"));
  EXPECT_FALSE(box_at(layout, "gen"));
}

TEST(IcicleLayout, SearchCountsMatchesUnderTheFocusIgnoringCase) {
  const auto tree = grpo_profile().merged_tree();
  const IcicleLayout all = layout_icicle(tree, {}, 0);
  const SearchHits mm = search_frames(all, "ATEN::MM");
  EXPECT_EQ(mm.frames, 1);
  EXPECT_EQ(mm.paths, (std::vector<std::string>{"update/update/aten::linear/aten::mm"}));
  // aten::add, aten::softmax, aten::linear and aten::mm; mm inside linear counted once.
  const SearchHits aten = search_frames(all, "aten");
  EXPECT_EQ(aten.frames, 4);
  EXPECT_NEAR(aten.share, (8.0 + 20.0 + 100.0) / 398.0, 1e-9);
  // Under another node's zoom nothing of update matches.
  EXPECT_EQ(search_frames(layout_icicle(tree, {"gen"}, 0), "aten::mm").frames, 0);
  EXPECT_EQ(search_frames(all, "").frames, 0);
  EXPECT_TRUE(frame_matches(*find_frame(tree, {"ref", "log_probs", "aten::softmax"}), "SoftMax"));
}

}  // namespace
}  // namespace rlwb::ui
