// The calling-context tree: paths merge, self time and bytes, shape
// overflow, the JSON form round-trips and names what is malformed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile/context_tree.h"

namespace rlwb::core::profile {
namespace {

using ::testing::HasSubstr;

ContextTree one_call(int64_t mm_ns, int64_t method_ns) {
  ContextTree t;
  Frame& method = t.root().child(FrameKind::node, "gen").child(FrameKind::method, "generate");
  method.metrics.calls = 1;
  method.metrics.wall_ns = method_ns;
  Frame& mm = method.child(FrameKind::op, "aten::mm");
  mm.metrics.calls = 3;
  mm.metrics.wall_ns = mm_ns;
  mm.metrics.self_bytes = 100;
  mm.add_shape("[8,32] [32,64]", 3);
  return t;
}

TEST(ContextTree, MergeAddsMetricsPathByPath) {
  ContextTree a = one_call(40, 100);
  a.merge(one_call(60, 150));
  const Frame* method = a.root().find(FrameKind::node, "gen")->find(FrameKind::method, "generate");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->metrics.calls, 2);
  EXPECT_EQ(method->metrics.wall_ns, 250);
  EXPECT_EQ(method->self_wall_ns(), 150);  // 250 less the two mm's 100
  const Frame* mm = method->find(FrameKind::op, "aten::mm");
  EXPECT_EQ(mm->metrics.calls, 6);
  EXPECT_EQ(mm->shapes.at("[8,32] [32,64]"), 6);
  EXPECT_EQ(method->bytes(), 200);
  EXPECT_EQ(a.frame_count(), 4u);  // root, node, method, op: the same path is not repeated
}

TEST(ContextTree, ShapesBeyondTheLimitAreCountedAsOther) {
  Frame f;
  for (int i = 0; i < 12; ++i) f.add_shape("[" + std::to_string(i) + "]");
  EXPECT_EQ(f.shapes.size(), Frame::kMaxShapes + 1);
  EXPECT_EQ(f.shapes.at("other"), 12 - static_cast<int64_t>(Frame::kMaxShapes));
}

TEST(ContextTree, HardwareCountersStayUnmeasuredUnlessOneSideMeasured) {
  FrameMetrics a, b;
  a.add(b);
  EXPECT_EQ(a.cycles, -1);
  b.cycles = 500;
  a.add(b);
  EXPECT_EQ(a.cycles, 500);
}

TEST(ContextTree, JsonRoundTripsAndWalkGivesPaths) {
  ContextTree t = one_call(40, 100);
  ContextTree back = ContextTree::from_json(nlohmann::json::parse(t.to_json().dump()));
  EXPECT_EQ(back.to_json(), t.to_json());
  std::vector<std::string> paths;
  back.walk([&](const std::vector<const Frame*>& path) { paths.push_back(path_label(path)); });
  EXPECT_EQ(paths, (std::vector<std::string>{"gen", "gen/generate", "gen/generate/aten::mm"}));
}

TEST(ContextTree, MalformedJsonNamesTheFrame) {
  auto j = one_call(1, 2).to_json();
  j["c"][0]["c"][0]["c"][0]["m"] = {1, 2};
  try {
    ContextTree::from_json(j);
    FAIL() << "accepted a frame with two metrics";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("root/gen/generate/aten::mm"));
    EXPECT_THAT(e.what(), HasSubstr("list of 10 numbers"));
  }
  EXPECT_THROW(ContextTree::from_json({{"k", "op"}, {"n", "x"}, {"m", std::vector<int>(10, 0)}}),
               std::runtime_error);  // the top frame must be the root
}

}  // namespace
}  // namespace rlwb::core::profile
