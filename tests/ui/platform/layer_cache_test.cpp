// Cached layers (ui/platform/layer_cache.h) without a window: ImGui alone,
// with no renderer or with a stand-in for the GL one. The GL side itself is
// checked by the GUI tests' screenshots (GuiRunsTest).
#include "ui/platform/layer_cache.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/ui/headless_imgui.h"

namespace rlwb::ui {
namespace {

constexpr ImU32 kLineColor = IM_COL32(31, 119, 180, 255);

// One ImGui frame inside a window, torn down afterwards.
class LayerCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::create_headless_imgui(ImVec2(400, 300));
    ImGui::NewFrame();
    ImGui::Begin("window");
  }
  void TearDown() override {
    ImGui::End();
    ImGui::EndFrame();
    set_layer_renderer(nullptr);
    ImGui::DestroyContext();
  }
  static void draw_a_line(ImDrawList&, LayerLines& lines) {
    const ImVec2 points[] = {{20, 20}, {60, 50}, {100, 25}};
    lines.add(points, kLineColor, 1);
  }
  static bool has_vertex_of_color(const ImDrawList& list, int from, ImU32 color) {
    return std::any_of(list.VtxBuffer.begin() + from, list.VtxBuffer.end(),
                       [&](const ImDrawVert& v) { return v.col == color; });
  }
};

TEST(LayerLines, KeepsPolylinesOfTwoOrMorePointsInOrder) {
  LayerLines lines;
  const ImVec2 two[] = {{0, 0}, {1, 1}}, one[] = {{5, 5}}, three[] = {{2, 2}, {3, 3}, {4, 4}};
  lines.add(two, IM_COL32(1, 2, 3, 255), 1);
  lines.add(one, IM_COL32(4, 5, 6, 255), 1);  // nothing to draw as a line
  lines.add(three, IM_COL32(7, 8, 9, 255), 2);
  ASSERT_EQ(lines.strips.size(), 2u);
  EXPECT_EQ(lines.strips[0].first, 0);
  EXPECT_EQ(lines.strips[0].count, 2);
  EXPECT_EQ(lines.strips[1].first, 2);
  EXPECT_EQ(lines.strips[1].count, 3);
  EXPECT_EQ(lines.strips[1].thickness, 2);
  ASSERT_EQ(lines.points.size(), 5u);
  EXPECT_EQ(lines.points[4].x, 4);
}

TEST_F(LayerCacheTest, WithoutARendererTheLinesAreDrawnIntoTheWindow) {
  ImDrawList& window = *ImGui::GetWindowDrawList();
  const int before = window.VtxBuffer.Size;
  const uint64_t redrawn = layer_stats().redrawn;
  draw_cached_layer(ImGui::GetID("layer"), 1, ImVec2(10, 10), ImVec2(110, 60), IM_COL32(16, 17, 20, 255),
                    draw_a_line);
  EXPECT_TRUE(has_vertex_of_color(window, before, kLineColor));
  EXPECT_EQ(layer_stats().redrawn, redrawn + 1);
}

TEST_F(LayerCacheTest, ARendererGetsTheLinesAndTheWindowShowsItsTexture) {
  LayerLines seen;
  const ImTextureID texture = reinterpret_cast<ImTextureID>(intptr_t{42});
  LayerRenderer renderer{
      [&](ImGuiID, uint64_t, ImVec2, ImVec2, ImU32, const LayerDraw& draw, ImTextureID& out) {
        ImDrawList list(ImGui::GetDrawListSharedData());
        draw(list, seen);
        out = texture;
        return true;
      }};
  set_layer_renderer(&renderer);
  ImDrawList& window = *ImGui::GetWindowDrawList();
  const int before = window.VtxBuffer.Size;
  draw_cached_layer(ImGui::GetID("layer"), 1, ImVec2(10, 10), ImVec2(110, 60), IM_COL32(16, 17, 20, 255),
                    draw_a_line);
  ASSERT_EQ(seen.strips.size(), 1u);
  EXPECT_EQ(seen.strips[0].count, 3);
  EXPECT_FALSE(has_vertex_of_color(window, before, kLineColor)) << "the lines belong in the texture";
  EXPECT_TRUE(std::any_of(window.CmdBuffer.begin(), window.CmdBuffer.end(), [&](const ImDrawCmd& cmd) {
    return cmd.TextureId == texture && cmd.ElemCount > 0;
  }));
}

}  // namespace
}  // namespace rlwb::ui
