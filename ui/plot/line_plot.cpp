#include "ui/plot/line_plot.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/platform/item_registry.h"
#include "ui/platform/layer_cache.h"

namespace rlwb::ui {
namespace {

constexpr float kLeft = 58, kBottom = 22, kTop = 6, kRight = 10;

const std::vector<double>& maybe_log(const std::vector<double>* values, bool log_y,
                                     std::vector<double>& store) {
  if (!log_y) return *values;
  store.resize(values->size());
  for (size_t i = 0; i < values->size(); ++i)
    store[i] = (*values)[i] > 0 ? std::log10((*values)[i]) : std::numeric_limits<double>::quiet_NaN();
  return store;
}

// The y vectors a series draws, in view units (log10 when log_y).
struct Values {
  const std::vector<double>* raw = nullptr;
  const std::vector<double>* smooth = nullptr;
  const std::vector<double>* lo = nullptr;
  const std::vector<double>* hi = nullptr;
};

Values prepare(const PlotSeries& s, bool log_y) {
  PlotCache& c = *s.cache;
  if (c.version != s.version || c.log_y != log_y) {
    c.log_values.clear(), c.log_smooth.clear(), c.log_lo.clear(), c.log_hi.clear();
    if (log_y) {
      maybe_log(s.y, true, c.log_values);
      if (s.smooth) maybe_log(s.smooth, true, c.log_smooth);
      if (s.band_lo) maybe_log(s.band_lo, true, c.log_lo);
      if (s.band_hi) maybe_log(s.band_hi, true, c.log_hi);
    }
    c.has_range = false;
    c.pixels = 0;  // reduce again
    c.raw_pyramid.clear(), c.smooth_pyramid.clear();
    c.version = s.version;
    c.log_y = log_y;
    auto widen = [&](const std::vector<double>& v) {
      for (double y : v) {
        if (!std::isfinite(y)) continue;
        if (!c.has_range) c.y_min = c.y_max = y;
        c.y_min = std::min(c.y_min, y);
        c.y_max = std::max(c.y_max, y);
        c.has_range = true;
      }
    };
    Values v;
    v.raw = log_y ? &c.log_values : s.y;
    v.lo = s.band_lo ? (log_y ? &c.log_lo : s.band_lo) : nullptr;
    v.hi = s.band_hi ? (log_y ? &c.log_hi : s.band_hi) : nullptr;
    widen(*v.raw);
    if (v.lo) widen(*v.lo);
    if (v.hi) widen(*v.hi);
    if (!s.x->empty()) {
      c.x_min = s.x->front();
      c.x_max = s.x->back();
    }
  }
  Values v;
  v.raw = log_y ? &c.log_values : s.y;
  v.smooth = s.smooth ? (log_y ? &c.log_smooth : s.smooth) : nullptr;
  v.lo = s.band_lo ? (log_y ? &c.log_lo : s.band_lo) : nullptr;
  v.hi = s.band_hi ? (log_y ? &c.log_hi : s.band_hi) : nullptr;
  return v;
}

// Per pixel column: the lowest lo and the highest hi (the band's extent).
void reduce_band(std::span<const double> x, std::span<const double> lo, std::span<const double> hi, double x0,
                 double x1, int pixels, std::vector<PlotPoint>& out_lo, std::vector<PlotPoint>& out_hi) {
  auto [first, last] = visible_range(x, x0, x1);
  const double scale = x1 > x0 ? pixels / (x1 - x0) : 0;
  int64_t column = INT64_MIN;
  for (size_t i = first; i < last; ++i) {
    if (std::isnan(lo[i]) || std::isnan(hi[i])) continue;
    int64_t c = static_cast<int64_t>(std::floor((x[i] - x0) * scale));
    if (c != column || out_lo.empty()) {
      out_lo.push_back({x[i], lo[i]});
      out_hi.push_back({x[i], hi[i]});
      column = c;
    } else {
      out_lo.back().y = std::min(out_lo.back().y, lo[i]);
      out_hi.back().y = std::max(out_hi.back().y, hi[i]);
    }
  }
}

// Fills [outer_min, outer_max] except the inner rectangle, so that a
// software rasterizer does not fill the pixels under the plot area twice.
void fill_around(ImDrawList& dl, ImVec2 outer_min, ImVec2 outer_max, ImVec2 inner_min, ImVec2 inner_max,
                 ImU32 color) {
  dl.AddRectFilled(outer_min, ImVec2(outer_max.x, inner_min.y), color);
  dl.AddRectFilled(ImVec2(outer_min.x, inner_max.y), outer_max, color);
  dl.AddRectFilled(ImVec2(outer_min.x, inner_min.y), ImVec2(inner_min.x, inner_max.y), color);
  dl.AddRectFilled(ImVec2(inner_max.x, inner_min.y), ImVec2(outer_max.x, inner_max.y), color);
}

double nearest_index(const std::vector<double>& x, double at) {
  if (x.empty()) return -1;
  auto it = std::lower_bound(x.begin(), x.end(), at);
  size_t i = static_cast<size_t>(it - x.begin());
  if (i == x.size()) return static_cast<double>(i - 1);
  if (i > 0 && at - x[i - 1] < x[i] - at) return static_cast<double>(i - 1);
  return static_cast<double>(i);
}

}  // namespace

ImU32 series_color(size_t index, int alpha) {
  static const ImU32 palette[] = {IM_COL32(31, 119, 180, 255),  IM_COL32(255, 127, 14, 255),
                                  IM_COL32(44, 160, 44, 255),   IM_COL32(214, 39, 40, 255),
                                  IM_COL32(148, 103, 189, 255), IM_COL32(140, 86, 75, 255),
                                  IM_COL32(227, 119, 194, 255), IM_COL32(127, 127, 127, 255),
                                  IM_COL32(188, 189, 34, 255),  IM_COL32(23, 190, 207, 255)};
  constexpr size_t n = sizeof(palette) / sizeof(palette[0]);
  ImU32 base = palette[index % n];
  if (index >= n) {  // a second round: lighter
    ImVec4 c = ImGui::ColorConvertU32ToFloat4(base);
    base = ImGui::ColorConvertFloat4ToU32(ImVec4(c.x * 0.6f + 0.4f, c.y * 0.6f + 0.4f, c.z * 0.6f + 0.4f, 1));
  }
  return (base & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
}

void line_plot(const char* id, PlotState& state, const std::vector<PlotSeries>& series,
               const PlotOptions& options, ImVec2 size, PlotHover* hover) {
  ImGui::PushID(id);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  size.x = std::max(size.x, 120.0f);
  size.y = std::max(size.y, 80.0f);
  ImGui::InvisibleButton("plot", size);
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  items().record(id, origin, ImVec2(origin.x + size.x, origin.y + size.y));
  ImDrawList* dl = ImGui::GetWindowDrawList();

  // Data in view units, and the fit.
  std::vector<Values> values;
  bool any = false;
  double fx0 = 0, fx1 = 0, fy0 = 0, fy1 = 0;
  for (const PlotSeries& s : series) {
    values.push_back(prepare(s, options.log_y));
    const PlotCache& c = *s.cache;
    if (!c.has_range || s.x->empty()) continue;
    if (!any) fx0 = c.x_min, fx1 = c.x_max, fy0 = c.y_min, fy1 = c.y_max;
    fx0 = std::min(fx0, c.x_min), fx1 = std::max(fx1, c.x_max);
    fy0 = std::min(fy0, c.y_min), fy1 = std::max(fy1, c.y_max);
    any = true;
  }
  if (state.was_log != options.log_y) {
    state.auto_fit = true;
    state.was_log = options.log_y;
  }
  if (state.auto_fit && any) {
    if (fx1 <= fx0) fx0 -= 0.5, fx1 += 0.5;
    if (fy1 <= fy0) fy0 -= std::max(0.5, std::abs(fy0) * 0.1), fy1 += std::max(0.5, std::abs(fy1) * 0.1);
    double pad = (fy1 - fy0) * 0.06;
    state.x0 = fx0, state.x1 = fx1, state.y0 = fy0 - pad, state.y1 = fy1 + pad;
  }

  // The plot area: the left margin fits the widest y label (small values
  // such as 0.000274 need more than the default).
  const float h = origin.y + size.y - kBottom - (origin.y + kTop);
  auto y_labels = [&]() {
    std::vector<std::pair<double, std::string>> labels;
    const std::vector<double> ticks = nice_ticks(state.y0, state.y1, std::max(2, static_cast<int>(h / 40)));
    const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 0;
    for (double t : ticks)
      labels.emplace_back(t, options.log_y ? format_tick(std::pow(10.0, t)) : format_tick(t, step));
    return labels;
  };
  float left = kLeft;
  for (const auto& [t, text] : y_labels()) left = std::max(left, ImGui::CalcTextSize(text.c_str()).x + 10);
  left = std::min(left, size.x / 3);
  const ImVec2 a(origin.x + left, origin.y + kTop);
  const ImVec2 b(origin.x + size.x - kRight, origin.y + size.y - kBottom);
  const float w = b.x - a.x;
  const int pixels = std::max(1, static_cast<int>(w));
  // The margins only: the series layer covers the plot area with an
  // opaque texture (draw_cached_layer rounds it out to whole pixels).
  fill_around(*dl, origin, ImVec2(origin.x + size.x, origin.y + size.y),
              ImVec2(std::floor(a.x), std::floor(a.y)), ImVec2(std::ceil(b.x), std::ceil(b.y)),
              IM_COL32(24, 26, 30, 255));

  // Zoom toward the cursor (wheel: x; shift+wheel: y), drag to pan, double-click to fit.
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  const double mx = state.x0 + (mouse.x - a.x) / w * (state.x1 - state.x0);
  const double my = state.y0 + (b.y - mouse.y) / h * (state.y1 - state.y0);
  if (hovered && io.MouseWheel != 0) {
    double f = std::pow(0.85, io.MouseWheel);
    if (io.KeyShift) {
      state.y0 = my + (state.y0 - my) * f, state.y1 = my + (state.y1 - my) * f;
    } else {
      state.x0 = mx + (state.x0 - mx) * f, state.x1 = mx + (state.x1 - mx) * f;
    }
    state.auto_fit = false;
  }
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    ImVec2 d = io.MouseDelta;
    double dx = d.x / w * (state.x1 - state.x0), dy = d.y / h * (state.y1 - state.y0);
    state.x0 -= dx, state.x1 -= dx, state.y0 += dy, state.y1 += dy;
    state.auto_fit = false;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) state.auto_fit = true;

  auto sx = [&](double x) { return a.x + static_cast<float>((x - state.x0) / (state.x1 - state.x0) * w); };
  auto sy = [&](double y) { return b.y - static_cast<float>((y - state.y0) / (state.y1 - state.y0) * h); };

  // Grid (drawn in the series layer, below the lines) and tick labels.
  const ImU32 grid = IM_COL32(60, 64, 72, 255), label = IM_COL32(170, 175, 185, 255);
  std::vector<float> grid_x, grid_y;
  const std::vector<double> x_ticks = nice_ticks(state.x0, state.x1, std::max(2, static_cast<int>(w / 90)));
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 0;
  for (double t : x_ticks) {
    float x = sx(t);
    grid_x.push_back(x);
    std::string text = format_tick(t, x_step);
    ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    dl->AddText(ImVec2(x - ts.x / 2, b.y + 3), label, text.c_str());
  }
  for (const auto& [t, text] : y_labels()) {
    float y = sy(t);
    grid_y.push_back(y);
    ImVec2 ts = ImGui::CalcTextSize(text.c_str());
    dl->AddText(ImVec2(a.x - ts.x - 4, y - ts.y / 2), label, text.c_str());
  }

  // Series: band, faint raw, strong smooth -- drawn into a cached layer
  // (layer_cache.h) that is redrawn only when something below changes.
  const bool show_raw = options.show_raw && series.size() <= options.raw_up_to;
  uint64_t key = 14695981039346656037ull;
  for (double v : {state.x0, state.x1, state.y0, state.y1}) hash_into(key, v);
  for (float v : {a.x - std::floor(a.x), a.y - std::floor(a.y), w, h, options.raw_alpha}) hash_into(key, v);
  hash_into(key, options.log_y);
  hash_into(key, show_raw);
  for (const PlotSeries& s : series) {
    hash_into(key, s.version);
    hash_into(key, s.color);
    for (const void* p : {static_cast<const void*>(s.x), static_cast<const void*>(s.y),
                          static_cast<const void*>(s.smooth), static_cast<const void*>(s.band_lo)})
      hash_into(key, p);
  }
  // Each line reduced to its pixel columns (cached until the view, the
  // size or the data change; the layer below is redrawn on the same
  // changes).
  bool lone_point = false;  // a line of one point is drawn as a dot
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    PlotCache& c = *s.cache;
    const Values& v = values[i];
    // The raw line is reduced only when it is drawn (with many series
    // only the smoothed ones are): half the work of a zoom.
    const bool need_raw = !v.smooth || show_raw;
    if (c.pixels != pixels || c.x0 != state.x0 || c.x1 != state.x1 || (need_raw && !c.raw_reduced)) {
      c.raw.clear(), c.smooth.clear(), c.lo.clear(), c.hi.clear();
      c.raw_reduced = need_raw;
      // Through a pyramid of each line's extremes: a zoom then costs
      // O(columns log n), not the points in view.
      auto reduce = [&](const std::vector<double>& y, MinMaxPyramid& pyramid, std::vector<PlotPoint>& out) {
        if (pyramid.size() != y.size()) pyramid.build(y);
        downsample_min_max(*s.x, y, state.x0, state.x1, pixels, out, &pyramid);
      };
      if (need_raw) reduce(*v.raw, c.raw_pyramid, c.raw);
      if (v.smooth) reduce(*v.smooth, c.smooth_pyramid, c.smooth);
      if (v.lo && v.hi) reduce_band(*s.x, *v.lo, *v.hi, state.x0, state.x1, pixels, c.lo, c.hi);
      c.pixels = pixels, c.x0 = state.x0, c.x1 = state.x1;
    }
    if (v.smooth)
      lone_point |= c.smooth.size() == 1 || (show_raw && c.raw.size() == 1);
    else
      lone_point |= c.raw.size() == 1;
  }
  // Bands and dots go on the layer's draw list, the lines above them as
  // LayerLines. The grid goes with the lines too (a layer of lines only is
  // drawn on the CPU in one pass, layer_cache.h), unless bands or dots must
  // cover it: the draw list is drawn below the lines.
  const bool grid_in_draw_list =
      lone_point || std::any_of(values.begin(), values.end(), [](const Values& v) { return v.lo && v.hi; });
  auto draw_series = [&](ImDrawList& target, LayerLines& lines) {
    auto grid_line = [&](ImVec2 from, ImVec2 to) {
      // Where ImGui's 1-px AddLine lands: half a pixel in.
      const ImVec2 segment[] = {ImVec2(from.x + 0.5f, from.y + 0.5f), ImVec2(to.x + 0.5f, to.y + 0.5f)};
      if (grid_in_draw_list)
        target.AddLine(from, to, grid);
      else
        lines.add(segment, grid, 1);
    };
    for (float x : grid_x) grid_line(ImVec2(x, a.y), ImVec2(x, b.y));
    for (float y : grid_y) grid_line(ImVec2(a.x, y), ImVec2(b.x, y));
    static thread_local std::vector<ImVec2> screen;
    auto polyline = [&](const std::vector<PlotPoint>& pts, ImU32 col, float thickness) {
      screen.clear();
      for (const PlotPoint& p : pts) screen.push_back(ImVec2(sx(p.x), sy(p.y)));
      if (screen.size() >= 2)
        lines.add(screen, col, thickness);
      else if (screen.size() == 1)
        target.AddCircleFilled(screen[0], 4.0f, col);  // a lone point stays visible
    };
    for (size_t i = 0; i < series.size(); ++i) {
      const PlotSeries& s = series[i];
      PlotCache& c = *s.cache;
      const Values& v = values[i];
      ImVec4 col = ImGui::ColorConvertU32ToFloat4(s.color);
      if (!c.lo.empty()) {
        ImU32 fill = ImGui::ColorConvertFloat4ToU32(ImVec4(col.x, col.y, col.z, 0.18f));
        for (size_t k = 0; k + 1 < c.lo.size(); ++k)
          target.AddQuadFilled(ImVec2(sx(c.lo[k].x), sy(c.lo[k].y)), ImVec2(sx(c.hi[k].x), sy(c.hi[k].y)),
                               ImVec2(sx(c.hi[k + 1].x), sy(c.hi[k + 1].y)),
                               ImVec2(sx(c.lo[k + 1].x), sy(c.lo[k + 1].y)), fill);
      }
      // Whole-pixel widths: aliased lines drawn on the CPU (line_raster.h;
      // ImGui, without a renderer, draws textured lines).
      if (v.smooth) {
        if (show_raw)
          polyline(c.raw, ImGui::ColorConvertFloat4ToU32(ImVec4(col.x, col.y, col.z, options.raw_alpha)),
                   1.0f);
        polyline(c.smooth, s.color, series.size() > 4 ? 1.0f : 2.0f);
      } else {
        polyline(c.raw, s.color, series.size() > 4 ? 1.0f : 2.0f);
      }
    }
  };
  draw_cached_layer(ImGui::GetID("series"), key, a, b, IM_COL32(16, 17, 20, 255), draw_series);
  ImVec2 xl = ImGui::CalcTextSize(options.x_label);
  dl->AddText(ImVec2(b.x - xl.x, b.y - xl.y - 2), IM_COL32(120, 125, 135, 255), options.x_label);

  // Crosshair and values under the pointer.
  dl->PushClipRect(a, b, true);
  if (hovered && mouse.x >= a.x && mouse.x <= b.x && mouse.y >= a.y && mouse.y <= b.y) {
    dl->AddLine(ImVec2(mouse.x, a.y), ImVec2(mouse.x, b.y), IM_COL32(200, 200, 200, 120));
    dl->AddLine(ImVec2(a.x, mouse.y), ImVec2(b.x, mouse.y), IM_COL32(200, 200, 200, 60));
    if (hover) hover->active = true, hover->x = mx;
    ImGui::BeginTooltip();
    ImGui::Text("%s %s", options.x_label, format_tick(mx).c_str());
    items().record_last_item(std::string(id) + "/hover");
    for (size_t i = 0; i < series.size(); ++i) {
      const PlotSeries& s = series[i];
      double k = nearest_index(*s.x, mx);
      if (k < 0) continue;
      size_t idx = static_cast<size_t>(k);
      const std::vector<double>& shown = s.smooth ? *s.smooth : *s.y;
      double vy = options.log_y ? (shown[idx] > 0 ? std::log10(shown[idx]) : NAN) : shown[idx];
      if (std::isfinite(vy)) dl->AddCircleFilled(ImVec2(sx((*s.x)[idx]), sy(vy)), 3.5f, s.color);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(s.color), "%s", s.label.c_str());
      ImGui::SameLine();
      if (s.smooth)
        ImGui::Text("%.5g (raw %.5g) @ %s", shown[idx], (*s.y)[idx], format_tick((*s.x)[idx]).c_str());
      else
        ImGui::Text("%.5g @ %s", shown[idx], format_tick((*s.x)[idx]).c_str());
    }
    ImGui::EndTooltip();
  }
  dl->PopClipRect();
  dl->AddRect(a, b, IM_COL32(80, 84, 92, 255));
  ImGui::PopID();
}

}  // namespace rlwb::ui
