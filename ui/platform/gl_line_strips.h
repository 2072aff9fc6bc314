// Draws a layer's LayerLines (layer_cache.h) with a minimal GL program:
// one GL_LINE_STRIP a polyline, one vertex a point, its colour a uniform.
// A software rasterizer sets up and fills such a strip with less work
// than the textured triangles ImGui makes of the same polyline
// (bench/RESULTS.md). Used by GlLayers
// (gl_layers.h) after it has drawn the layer's ImDrawList. Needs a
// current OpenGL 3 context.
#pragma once

#include "ui/platform/layer_cache.h"

namespace rlwb::ui {

class GlLineStrips {
 public:
  // Builds the program; false when the context cannot (the caller then
  // draws the lines through ImGui instead).
  bool create();
  void destroy();
  // Draws `lines` (screen coordinates) into the bound framebuffer, whose
  // viewport shows the screen rectangle [origin, origin + size].
  void draw(const LayerLines &lines, ImVec2 origin, ImVec2 size);

 private:
  unsigned program_ = 0, vertex_array_ = 0, buffer_ = 0;
  int transform_ = -1, color_ = -1;
  float max_width_ = 1;
};

}  // namespace rlwb::ui
