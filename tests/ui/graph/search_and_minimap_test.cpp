// The editor's search (nodes by id, call, column or port) and the
// minimap's geometry: where it goes and how it maps back to the world.
#include <gtest/gtest.h>

#include "tests/ui/ui_test_support.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/minimap.h"

namespace rlwb::ui {
namespace {

using Strings = std::vector<std::string>;

TEST(SearchNodes, MatchesIdsCallsColumnsAndPortsIgnoringCase) {
  const core::Experiment exp = test::demo_experiment();
  EXPECT_EQ(search_nodes(exp, "x_sq"), (Strings{"square", "total"}));  // written by one, read by the other
  EXPECT_EQ(search_nodes(exp, "GLOBAL_TOTAL"), (Strings{"global", "metrics"}));
  EXPECT_EQ(search_nodes(exp, "negator.neg"), (Strings{"negate"}));  // the call
  EXPECT_EQ(search_nodes(exp, "sum"),
            (Strings{"total", "global"}));  // ports: total's out 'sum', global's call
  EXPECT_TRUE(search_nodes(exp, "").empty());
  EXPECT_TRUE(search_nodes(exp, "nothing-like-this").empty());
}

NodeBox box(const std::string& id, float x0, float y0, float x1, float y1) {
  NodeBox b;
  b.id = id;
  b.min = ImVec2(x0, y0);
  b.max = ImVec2(x1, y1);
  return b;
}

TEST(Minimap, FitsTheGraphInTheLowerRightCornerAndMapsBackToTheWorld) {
  const std::vector<NodeBox> world = {box("a", 100, 40, 290, 200), box("b", 2000, 900, 2190, 1100)};
  const ImVec2 origin(300, 100), size(1000, 700);
  const MinimapGeometry map = minimap_geometry(world, origin, size);
  ASSERT_TRUE(map.shown);
  EXPECT_LE(map.max.x - map.min.x, 200.0f);
  EXPECT_LE(map.max.y - map.min.y, 130.0f);
  EXPECT_FLOAT_EQ(map.max.x, origin.x + size.x - 10);
  EXPECT_FLOAT_EQ(map.max.y, origin.y + size.y - 10);
  for (const auto& b : world) {
    EXPECT_TRUE(map.contains(map.to_screen(b.min))) << b.id;
    EXPECT_TRUE(map.contains(map.to_screen(b.max))) << b.id;
    const ImVec2 back = map.to_world(map.to_screen(b.min));
    EXPECT_NEAR(back.x, b.min.x, 1e-2);
    EXPECT_NEAR(back.y, b.min.y, 1e-2);
  }
  // No boxes, or a canvas too small to spare its corner: no minimap.
  EXPECT_FALSE(minimap_geometry({}, origin, size).shown);
  EXPECT_FALSE(minimap_geometry(world, origin, ImVec2(400, 300)).shown);
  EXPECT_FALSE(MinimapGeometry{}.contains(ImVec2(0, 0)));
}

}  // namespace
}  // namespace rlwb::ui
