#include "ui/platform/line_raster.h"

#include <algorithm>
#include <cmath>

namespace rlwb::ui {
namespace {

// floor() for the clipped coordinates, which lie within a margin of the
// image: a truncation of a positive number (std::floor is a libm call
// without SSE4.1, and this loop calls it per pixel).
constexpr double kFloorOffset = 1 << 20;
long floor_near(double v) { return static_cast<long>(v + kFloorOffset) - static_cast<long>(kFloorOffset); }

uint32_t scale_channel(uint32_t value, uint32_t by) { return (value * by + 127) / 255; }

uint32_t premultiply(ImU32 color) {
  const uint32_t a = (color >> IM_COL32_A_SHIFT) & 0xFF;
  if (a == 255) return color;
  uint32_t out = a << IM_COL32_A_SHIFT;
  for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT})
    out |= scale_channel((color >> shift) & 0xFF, a) << shift;
  return out;
}

// "source over destination", both premultiplied.
uint32_t over(uint32_t source, uint32_t destination) {
  const uint32_t keep = 255 - ((source >> IM_COL32_A_SHIFT) & 0xFF);
  if (keep == 0) return source;
  uint32_t out = 0;
  for (int shift = 0; shift < 32; shift += 8)
    out |= (((source >> shift) & 0xFF) + scale_channel((destination >> shift) & 0xFF, keep)) << shift;
  return out;
}

// Clips the segment p + t (q - p), t in [0, 1], to the rectangle
// (Liang-Barsky); false when nothing of it is inside.
bool clip(double& px, double& py, double& qx, double& qy, double x0, double y0, double x1, double y1) {
  const double dx = qx - px, dy = qy - py;
  double t0 = 0, t1 = 1;
  auto edge = [&](double p, double q) {  // p * t <= q
    if (p == 0) return q >= 0;
    const double t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      t0 = std::max(t0, t);
    } else {
      if (t < t0) return false;
      t1 = std::min(t1, t);
    }
    return true;
  };
  if (!edge(-dx, px - x0) || !edge(dx, x1 - px) || !edge(-dy, py - y0) || !edge(dy, y1 - py)) return false;
  const double sx = px, sy = py;
  px = sx + t0 * dx, py = sy + t0 * dy;
  qx = sx + t1 * dx, qy = sy + t1 * dy;
  return true;
}

// Whether the segment (u0, v0) -> (u1, v1) passes through the diamond
// |u - cu| + |v - cv| < 1/2 and does not end inside it. The L1 distance to
// the centre is convex and piecewise linear along the segment, so its
// minimum is at an end or where u or v equals the centre's.
bool exits_diamond(double u0, double v0, double u1, double v1, double cu, double cv) {
  auto distance = [&](double t) {
    return std::abs(u0 + t * (u1 - u0) - cu) + std::abs(v0 + t * (v1 - v0) - cv);
  };
  if (distance(1) < 0.5) return false;
  double nearest = std::min(distance(0), distance(1));
  if (u1 != u0) nearest = std::min(nearest, distance(std::clamp((cu - u0) / (u1 - u0), 0.0, 1.0)));
  if (v1 != v0) nearest = std::min(nearest, distance(std::clamp((cv - v0) / (v1 - v0), 0.0, 1.0)));
  return nearest < 0.5;
}

class Canvas {
 public:
  explicit Canvas(LineImage& image) : image_(image) {}

  // One segment, in image coordinates (pixel (i, j) covers [i, i+1) x [j,
  // j+1)).
  void segment(double px, double py, double qx, double qy, int width, uint32_t color) {
    if (!std::isfinite(px) || !std::isfinite(py) || !std::isfinite(qx) || !std::isfinite(qy)) return;
    // A margin wider than any line, so that clipping moves no lit pixel.
    const double margin = width + 2.0;
    const bool inside = std::min({px, py, qx, qy}) >= 0 && std::max(px, qx) <= image_.width &&
                        std::max(py, qy) <= image_.height;
    if (!inside && !clip(px, py, qx, qy, -margin, -margin, image_.width + margin, image_.height + margin))
      return;
    const bool x_major = std::abs(qx - px) >= std::abs(qy - py);
    // u: the major axis, v: the minor one.
    const double u0 = x_major ? px : py, u1 = x_major ? qx : qy;
    const double v0 = x_major ? py : px, v1 = x_major ? qy : qx;
    if (u0 == u1) return;  // a point: GL draws nothing either
    // GL's diamond-exit rule: a pixel is lit when the segment leaves the
    // diamond |x - cx| + |y - cy| < 1/2 around its centre. Along the
    // major axis that is the pixel the centre line crosses in every column
    // between the two ends; at the two ends' columns it is decided by
    // testing the diamond (so a polyline's joint is lit by one segment).
    const long k_first = floor_near(std::min(u0, u1)), k_last = floor_near(std::max(u0, u1));
    const long major_extent = x_major ? image_.width : image_.height;
    const long minor_extent = x_major ? image_.height : image_.width;
    const double slope = (v1 - v0) / (u1 - u0), half = (width - 1) * 0.5;
    const double u_low = std::min(u0, u1), u_high = std::max(u0, u1);
    for (long k = std::max(k_first, 0L), k_end = std::min(k_last + 1, major_extent); k < k_end; ++k) {
      const double centre = k + 0.5, u = std::clamp(centre, u_low, u_high);
      const double v = v0 + (u - u0) * slope;
      const long m = floor_near(v);
      if (k == k_first || k == k_last) {
        // Through the centre line the segment is inside the diamond of
        // pixel m; it is lit unless it ends there. Otherwise test.
        const bool ends_inside = std::abs(u1 - centre) + std::abs(v1 - (m + 0.5)) < 0.5;
        if (u == centre ? ends_inside : !exits_diamond(u0, v0, u1, v1, centre, m + 0.5)) continue;
      }
      const long first = floor_near(v - half);
      for (long n = std::max(first, 0L), end = std::min(first + width, minor_extent); n < end; ++n)
        blend(x_major ? k : n, x_major ? n : k, color);
    }
  }

 private:
  void blend(long x, long y, uint32_t color) {
    uint32_t& pixel = image_.pixels[static_cast<size_t>(y) * image_.width + x];
    pixel = over(color, pixel);
  }

  LineImage& image_;
};

}  // namespace

void rasterize_lines(const LayerLines& lines, ImVec2 origin, int width, int height, LineImage& image,
                     ImU32 background) {
  image.width = std::max(width, 0);
  image.height = std::max(height, 0);
  image.pixels.assign(static_cast<size_t>(image.width) * image.height, premultiply(background));
  if (image.pixels.empty()) return;
  Canvas canvas(image);
  for (const LayerLines::Strip& strip : lines.strips) {
    const uint32_t color = premultiply(strip.color);
    const int line_width = std::max(1, static_cast<int>(std::lround(strip.thickness)));
    for (int i = strip.first; i + 1 < strip.first + strip.count; ++i) {
      const ImVec2 p = lines.points[i], q = lines.points[i + 1];
      canvas.segment(p.x - origin.x, p.y - origin.y, q.x - origin.x, q.y - origin.y, line_width, color);
    }
  }
}

}  // namespace rlwb::ui
