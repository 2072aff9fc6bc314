// What a plot puts in its cached layer (ui/plot/line_plot.h): ImGui alone,
// with a stand-in renderer that keeps the layer's draw list and lines.
#include "ui/plot/line_plot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "tests/ui/headless_imgui.h"
#include "ui/platform/layer_cache.h"

namespace rlwb::ui {
namespace {

constexpr ImU32 kGrid = IM_COL32(60, 64, 72, 255);

class LinePlotLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::create_headless_imgui(ImVec2(800, 600));
    renderer_.render = [this](ImGuiID, uint64_t, ImVec2, ImVec2, ImU32, const LayerDraw& draw,
                              ImTextureID& texture) {
      list_.emplace(ImGui::GetDrawListSharedData());
      list_->_ResetForNewFrame();
      list_->PushTextureID(ImGui::GetIO().Fonts->TexID);
      lines_.clear();
      draw(*list_, lines_);
      texture = reinterpret_cast<ImTextureID>(intptr_t{7});
      return true;
    };
    set_layer_renderer(&renderer_);
  }
  void TearDown() override {
    set_layer_renderer(nullptr);
    list_.reset();
    ImGui::DestroyContext();
  }
  // One frame with a plot of `x`, `y`.
  void plot(const std::vector<double>& x, const std::vector<double>& y) {
    ImGui::NewFrame();
    ImGui::Begin("window");
    PlotSeries series;
    series.x = &x, series.y = &y, series.cache = &cache_, series.version = 1;
    line_plot("plot", state_, {series}, PlotOptions{}, ImVec2(400, 300));
    ImGui::End();
    ImGui::EndFrame();
  }
  bool draw_list_has(ImU32 color) const {
    return std::any_of(list_->VtxBuffer.begin(), list_->VtxBuffer.end(),
                       [&](const ImDrawVert& v) { return v.col == color; });
  }
  bool lines_have(ImU32 color) const {
    return std::any_of(lines_.strips.begin(), lines_.strips.end(),
                       [&](const LayerLines::Strip& s) { return s.color == color; });
  }

  LayerRenderer renderer_;
  std::optional<ImDrawList> list_;
  LayerLines lines_;
  PlotCache cache_;
  PlotState state_;
};

TEST_F(LinePlotLayerTest, APlotOfLinesPutsItsGridWithTheLinesAndNothingInTheDrawList) {
  // A layer of lines only is drawn on the CPU in one pass (gl_layers.h).
  plot({0, 1, 2, 3}, {1, 3, 2, 4});
  ASSERT_TRUE(list_);
  EXPECT_EQ(list_->VtxBuffer.Size, 0);
  EXPECT_TRUE(lines_have(kGrid));
  EXPECT_TRUE(lines_have(IM_COL32(90, 160, 255, 255)));
}

TEST_F(LinePlotLayerTest, ALonePointsDotCoversTheGrid) {
  // The dot is in the draw list, drawn below the lines: the grid must go
  // there too, first, or it would cross the dot.
  plot({5}, {2});
  ASSERT_TRUE(list_);
  EXPECT_TRUE(draw_list_has(kGrid));
  EXPECT_FALSE(lines_have(kGrid));
  const auto grid_vertex = std::find_if(list_->VtxBuffer.begin(), list_->VtxBuffer.end(),
                                        [](const ImDrawVert& v) { return v.col == kGrid; });
  const auto dot_vertex =
      std::find_if(list_->VtxBuffer.begin(), list_->VtxBuffer.end(),
                   [](const ImDrawVert& v) { return v.col == IM_COL32(90, 160, 255, 255); });
  ASSERT_NE(dot_vertex, list_->VtxBuffer.end());
  EXPECT_LT(grid_vertex, dot_vertex) << "the grid is drawn first";
}

}  // namespace
}  // namespace rlwb::ui
