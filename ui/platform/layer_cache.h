// Cached layers: part of a window drawn once into an offscreen texture and
// shown as one textured quad until what it depends on changes.
//
// Why: the compare view overlays 20 series in each of 8 plots, about 200k
// vertices a frame. With a software rasterizer (Mesa llvmpipe under Xvfb,
// or any machine without a GPU) filling them costs 60-180 ms a frame,
// while the plot only changes when the data, the view or the size do. A
// plot therefore draws its series through draw_cached_layer with a key
// that hashes everything they depend on; frames with the same key cost
// one quad.
//
// A layer has two parts: an ImDrawList (fills, grid, text) and, on top of
// it, LayerLines: polylines with one vertex a point. The GL side draws
// those on the CPU (line_raster.h) into a texture laid over the draw list:
// llvmpipe spends more setting up thousands of tiny GL lines than the
// pixels they light (one redrawn layer is what a zoom frame adds;
// bench/RESULTS.md).
//
// The frame loop provides the GL side (gl_layers.h). Without it (no
// renderer, e.g. ImGui used without a window) draw_cached_layer draws the
// layer straight into the window's draw list, lines as AddPolyline, so
// callers need no fallback.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "imgui.h"

namespace rlwb::ui {

// Polylines in screen coordinates, drawn above the layer's draw list in
// the order they were added.
struct LayerLines {
  struct Strip {
    int first = 0, count = 0;  // into points
    ImU32 color = 0;
    float thickness = 1;  // whole pixels
  };
  std::vector<ImVec2> points;
  std::vector<Strip> strips;

  // Strips of fewer than two points draw nothing (the caller marks lone
  // points).
  void add(std::span<const ImVec2> polyline, ImU32 color, float thickness);
  void clear() { points.clear(), strips.clear(); }
};

// The lines as ImGui polylines on `list`: how they are drawn without a GL
// line program (no renderer, or its program did not build).
void add_as_polylines(ImDrawList& list, const LayerLines& lines);

using LayerDraw = std::function<void(ImDrawList&, LayerLines&)>;

// Draws `draw`'s output clipped to [min, max] (screen coordinates) into the
// current window. `draw` receives the draw list and the lines to fill, in
// screen coordinates; it is called only when `key` differs from the key
// this `id` had the last time (or the size changed). `background` fills
// the area first (the texture is opaque).
void draw_cached_layer(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                       const LayerDraw& draw);

// Mixes `value`'s bytes into `key` (for building layer keys).
template <typename T>
void hash_into(uint64_t& key, const T& value) {
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(&value);
  for (size_t i = 0; i < sizeof(T); ++i) key = (key ^ bytes[i]) * 1099511628211ull;  // FNV-1a
}

// What the frame loop plugs in. render returns false when it cannot (then
// the layer is drawn directly); otherwise it sets `texture` to the layer's.
struct LayerRenderer {
  std::function<bool(ImGuiID id, uint64_t key, ImVec2 min, ImVec2 max, ImU32 background,
                     const LayerDraw& draw, ImTextureID& texture)>
      render;
};
void set_layer_renderer(LayerRenderer* renderer);  // nullptr: draw directly

// Counters, for tests and the benchmark: layers redrawn / reused since start.
struct LayerStats {
  uint64_t redrawn = 0, reused = 0;
};
LayerStats layer_stats();

}  // namespace rlwb::ui
