#include "ui/platform/layer_cache.h"

#include <cmath>

namespace rlwb::ui {
namespace {

LayerRenderer* g_renderer = nullptr;
LayerStats g_stats;

}  // namespace

void LayerLines::add(std::span<const ImVec2> polyline, ImU32 color, float thickness) {
  if (polyline.size() < 2) return;
  strips.push_back({static_cast<int>(points.size()), static_cast<int>(polyline.size()), color, thickness});
  points.insert(points.end(), polyline.begin(), polyline.end());
}

void add_as_polylines(ImDrawList& list, const LayerLines& lines) {
  for (const LayerLines::Strip& s : lines.strips)
    list.AddPolyline(&lines.points[s.first], s.count, s.color, 0, s.thickness);
}

void set_layer_renderer(LayerRenderer* renderer) { g_renderer = renderer; }

LayerStats layer_stats() { return g_stats; }

void draw_cached_layer(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                       const LayerDraw& draw) {
  // Whole pixels, so that the texture is shown 1:1.
  min = ImVec2(std::floor(min.x), std::floor(min.y));
  max = ImVec2(std::ceil(max.x), std::ceil(max.y));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImTextureID texture = nullptr;
  bool redrawn = false;
  auto counting_draw = [&](ImDrawList& target, LayerLines& lines) {
    redrawn = true;
    draw(target, lines);
  };
  if (g_renderer && g_renderer->render &&
      g_renderer->render(id, key, min, max, background, counting_draw, texture)) {
    // GL's first row is the bottom one: flip v.
    dl->AddImage(texture, min, max, ImVec2(0, 1), ImVec2(1, 0));
    ++(redrawn ? g_stats.redrawn : g_stats.reused);
    return;
  }
  dl->AddRectFilled(min, max, background);
  dl->PushClipRect(min, max, true);
  static thread_local LayerLines lines;
  lines.clear();
  draw(*dl, lines);
  add_as_polylines(*dl, lines);
  dl->PopClipRect();
  ++g_stats.redrawn;
}

}  // namespace rlwb::ui
