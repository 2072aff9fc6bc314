// A layer's LayerLines (layer_cache.h) drawn on the CPU into an RGBA image,
// which GlLayers uploads as a texture and lays over the layer's draw list.
//
// Why not GL lines: a plot layer holds about 20 polylines of two points a
// pixel column, some 12,000 segments of a few pixels each. A software
// rasterizer (Mesa llvmpipe) spends about 0.3 us setting up and binning
// each GL primitive, so a redrawn plot cost 3-4 ms of line setup while the
// pixels it lit were a few thousand; here the same lines cost what they
// fill (bench/RESULTS.md). On a GPU the upload is 4 bytes a pixel of the
// layer, small next to anything else a frame does.
//
// The lines look as GL's aliased lines do: a segment lights one pixel per
// column (x-major) or row (y-major), the one its centre line crosses, from
// its first point up to, not including, its last, so the joints of a
// polyline are lit once; a width of w pixels widens it across its major
// axis. Colours blend "over" in the order the lines were added.
#pragma once

#include <cstdint>
#include <vector>

#include "ui/platform/layer_cache.h"

namespace rlwb::ui {

// An image with premultiplied alpha, 4 bytes a pixel in memory order R, G,
// B, A (ImU32's layout, GL_RGBA/GL_UNSIGNED_BYTE), top row first;
// transparent where no line passes.
struct LineImage {
  int width = 0, height = 0;
  std::vector<uint32_t> pixels;

  uint32_t at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

// Draws `lines` (screen coordinates) into `image`, whose top-left pixel is
// the screen pixel at `origin`; resizes it and fills it with `background`
// (transparent by default; not premultiplied, like the lines' colours) first. Points far
// outside (a zoomed-in view keeps one point beyond each edge) are clipped
// before any pixel is visited; segments with a NaN or infinite point are
// skipped.
void rasterize_lines(const LayerLines& lines, ImVec2 origin, int width, int height, LineImage& image,
                     ImU32 background = 0);

}  // namespace rlwb::ui
