// The GL side of layer_cache.h: one texture (and framebuffer) per layer id,
// redrawn when its key or size changes: the layer's ImDrawList with the
// ImGui OpenGL3 backend, then its lines, drawn on the CPU (line_raster.h)
// into a second texture that is laid over it as one quad. A layer of
// lines only (a plot without bands) skips the GL pass: the CPU draws it
// all and it is uploaded into the layer's texture. The frame loop
// (frame_loop.cpp) owns one and plugs it in as the LayerRenderer. Needs a
// current GL context for its whole life.
#pragma once

#include <map>

#include "ui/platform/layer_cache.h"
#include "ui/platform/line_raster.h"

namespace rlwb::ui {

class GlLayers {
 public:
  GlLayers();
  ~GlLayers();
  GlLayers(const GlLayers&) = delete;
  GlLayers& operator=(const GlLayers&) = delete;

  // LayerRenderer::render.
  bool render(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background, const LayerDraw& draw,
              ImTextureID& texture);
  // Frees layers no frame has drawn for a while (a closed panel, a run
  // taken out of the comparison).
  void end_frame();

 private:
  struct Layer {
    unsigned framebuffer = 0, texture = 0;
    unsigned lines_texture = 0;  // the lines, premultiplied; same size
    int width = 0, height = 0;
    uint64_t key = 0;
    bool drawn = false;
    int last_frame = 0;
  };
  static bool allocate(Layer& layer, int width, int height);
  static void release(Layer& layer);
  void redraw(Layer& layer, ImVec2 min, ImVec2 max, ImU32 background, const LayerDraw& draw);

  std::map<ImGuiID, Layer> layers_;
  int frame_ = 0;
  LayerLines lines_;  // reused between redraws
  LineImage line_image_;
};

}  // namespace rlwb::ui
