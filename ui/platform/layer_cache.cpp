#include "ui/platform/layer_cache.h"

#include <cmath>

namespace rlwb::ui {
namespace {

LayerRenderer* g_renderer = nullptr;
LayerStats g_stats;

}  // namespace

void set_layer_renderer(LayerRenderer* renderer) { g_renderer = renderer; }

LayerStats layer_stats() { return g_stats; }

void draw_cached_layer(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                       const std::function<void(ImDrawList&)>& draw) {
  // Whole pixels, so that the texture is shown 1:1.
  min = ImVec2(std::floor(min.x), std::floor(min.y));
  max = ImVec2(std::ceil(max.x), std::ceil(max.y));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImTextureID texture = nullptr;
  bool redrawn = false;
  auto counting_draw = [&](ImDrawList& target) {
    redrawn = true;
    draw(target);
  };
  if (g_renderer && g_renderer->render && g_renderer->render(id, key, min, max, background, counting_draw, texture)) {
    // GL's first row is the bottom one: flip v.
    dl->AddImage(texture, min, max, ImVec2(0, 1), ImVec2(1, 0));
    ++(redrawn ? g_stats.redrawn : g_stats.reused);
    return;
  }
  dl->AddRectFilled(min, max, background);
  dl->PushClipRect(min, max, true);
  draw(*dl);
  dl->PopClipRect();
  ++g_stats.redrawn;
}

}  // namespace rlwb::ui
