// The node canvas's pan and zoom: world coordinates (what the layout
// stores) to screen pixels and back. Pure math, unit-tested.
#pragma once

#include <algorithm>

#include "imgui.h"

namespace rlwb::ui {

struct CanvasView {
  ImVec2 offset{0, 0};  // world point drawn at the canvas origin is -offset
  float zoom = 1.0f;
  static constexpr float kMinZoom = 0.2f, kMaxZoom = 3.0f;

  ImVec2 to_screen(ImVec2 world, ImVec2 origin) const {
    return {origin.x + (world.x + offset.x) * zoom, origin.y + (world.y + offset.y) * zoom};
  }
  ImVec2 to_world(ImVec2 screen, ImVec2 origin) const {
    return {(screen.x - origin.x) / zoom - offset.x, (screen.y - origin.y) / zoom - offset.y};
  }
  // Zooms by `factor`, keeping the world point under `cursor` where it is.
  void zoom_at(ImVec2 cursor, ImVec2 origin, float factor) {
    ImVec2 world = to_world(cursor, origin);
    zoom = std::clamp(zoom * factor, kMinZoom, kMaxZoom);
    offset = {(cursor.x - origin.x) / zoom - world.x, (cursor.y - origin.y) / zoom - world.y};
  }
  // Pans by a screen-pixel delta.
  void pan(ImVec2 screen_delta) {
    offset.x += screen_delta.x / zoom;
    offset.y += screen_delta.y / zoom;
  }
  // Puts `world` at the centre of a canvas of `size` pixels, at this zoom.
  void centre_on(ImVec2 world, ImVec2 size) {
    offset = {size.x / (2 * zoom) - world.x, size.y / (2 * zoom) - world.y};
  }
  // Fits the world box into a canvas of `size` pixels with `margin` pixels around, centred.
  void frame(ImVec2 world_min, ImVec2 world_max, ImVec2 size, float margin = 40) {
    float w = std::max(world_max.x - world_min.x, 1.0f), h = std::max(world_max.y - world_min.y, 1.0f);
    zoom = std::clamp(std::min((size.x - 2 * margin) / w, (size.y - 2 * margin) / h), kMinZoom, 1.5f);
    offset = {size.x / (2 * zoom) - (world_min.x + world_max.x) / 2,
              size.y / (2 * zoom) - (world_min.y + world_max.y) / 2};
  }
};

}  // namespace rlwb::ui
