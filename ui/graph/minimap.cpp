#include "ui/graph/minimap.h"

#include <algorithm>

#include "ui/platform/item_registry.h"

namespace rlwb::ui {

MinimapGeometry minimap_geometry(const std::vector<NodeBox>& world, ImVec2 origin, ImVec2 size) {
  MinimapGeometry map;
  constexpr float kWidth = 200, kHeight = 130, kMargin = 10, kPad = 6;
  if (world.empty() || size.x < 3 * kWidth || size.y < 3 * kHeight) return map;
  ImVec2 lo = world[0].min, hi = world[0].max;
  for (const auto& b : world) {
    lo = ImVec2(std::min(lo.x, b.min.x), std::min(lo.y, b.min.y));
    hi = ImVec2(std::max(hi.x, b.max.x), std::max(hi.y, b.max.y));
  }
  const float w = std::max(hi.x - lo.x, 1.0f), h = std::max(hi.y - lo.y, 1.0f);
  map.scale = std::min((kWidth - 2 * kPad) / w, (kHeight - 2 * kPad) / h);
  const ImVec2 drawn(w * map.scale + 2 * kPad, h * map.scale + 2 * kPad);
  map.max = ImVec2(origin.x + size.x - kMargin, origin.y + size.y - kMargin);
  map.min = ImVec2(map.max.x - drawn.x, map.max.y - drawn.y);
  map.world_origin = ImVec2(lo.x - kPad / map.scale, lo.y - kPad / map.scale);
  map.shown = true;
  return map;
}

void draw_minimap(ImDrawList* dl, const MinimapGeometry& map, const std::vector<NodeBox>& world,
                  const CanvasView& view, ImVec2 origin, ImVec2 size,
                  const std::set<std::string>& highlighted) {
  if (!map.shown) return;
  dl->AddRectFilled(map.min, map.max, IM_COL32(18, 19, 23, 230), 4);
  dl->AddRect(map.min, map.max, IM_COL32(70, 75, 90, 255), 4);
  for (const auto& b : world) {
    const ImU32 fill = highlighted.count(b.id) ? IM_COL32(240, 170, 60, 255)
                       : b.task                ? IM_COL32(80, 110, 80, 255)
                                               : IM_COL32(95, 105, 125, 255);
    dl->AddRectFilled(map.to_screen(b.min), map.to_screen(b.max), fill, 1);
  }
  // What the canvas shows, clipped to the minimap.
  ImVec2 a = map.to_screen(view.to_world(origin, origin));
  ImVec2 c = map.to_screen(view.to_world(ImVec2(origin.x + size.x, origin.y + size.y), origin));
  a = ImVec2(std::clamp(a.x, map.min.x, map.max.x), std::clamp(a.y, map.min.y, map.max.y));
  c = ImVec2(std::clamp(c.x, map.min.x, map.max.x), std::clamp(c.y, map.min.y, map.max.y));
  dl->AddRect(a, c, IM_COL32(230, 230, 240, 255), 0, 0, 1.5f);
  items().record("minimap", map.min, map.max);
  items().record("minimap/view", a, c);
}

}  // namespace rlwb::ui
