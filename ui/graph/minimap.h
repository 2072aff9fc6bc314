// The canvas's minimap: every box of the graph shrunk into the canvas's
// lower right corner, with the part the canvas shows outlined. Pressing or
// dragging on it centres the canvas on that point (graph_canvas.cpp).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "imgui.h"
#include "ui/graph/canvas_view.h"
#include "ui/graph/graph_editor.h"

namespace rlwb::ui {

struct MinimapGeometry {
  bool shown = false;   // false: no boxes, or a canvas too small to spare the corner
  ImVec2 min, max;      // on screen
  ImVec2 world_origin;  // the world point drawn at `min`
  float scale = 0;      // screen pixels per world unit

  ImVec2 to_screen(ImVec2 world) const {
    return {min.x + (world.x - world_origin.x) * scale, min.y + (world.y - world_origin.y) * scale};
  }
  ImVec2 to_world(ImVec2 screen) const {
    return {world_origin.x + (screen.x - min.x) / scale, world_origin.y + (screen.y - min.y) / scale};
  }
  bool contains(ImVec2 p) const {
    return shown && p.x >= min.x && p.x <= max.x && p.y >= min.y && p.y <= max.y;
  }
};

// Where the minimap goes for boxes in world units (world_boxes) on a canvas
// at `origin` of `size` pixels: at most 200 x 130 pixels, the graph's aspect.
MinimapGeometry minimap_geometry(const std::vector<NodeBox>& world, ImVec2 origin, ImVec2 size);

// Draws it: the boxes (`highlighted` ones in the search colour) and the
// rectangle `view` shows of the canvas. Records items "minimap" and
// "minimap/view".
void draw_minimap(ImDrawList* dl, const MinimapGeometry& map, const std::vector<NodeBox>& world,
                  const CanvasView& view, ImVec2 origin, ImVec2 size,
                  const std::set<std::string>& highlighted);

}  // namespace rlwb::ui
