// A line plot drawn on ImDrawList (no ImPlot): several series over a shared
// x axis, optional EMA line over the faint raw series, optional min-max
// band, log y, hover crosshair with every series' value, wheel zoom toward
// the cursor, drag to pan, double-click to fit. Dense series are reduced to
// per-pixel min/max (series.h) and the reduction is cached until the data,
// the view or the size change, so a million points cost nothing per frame.
//
//   PlotState state;                          // per panel, owned by the app
//   std::vector<PlotSeries> series = {...};   // pointers into the app's data
//   line_plot("plot/loss", state, series, options, ImVec2(w, h));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "imgui.h"
#include "ui/plot/series.h"

namespace rlwb::ui {

// What a series' reduction was computed for; owned by whoever owns the data.
struct PlotCache {
  uint64_t version = UINT64_MAX;
  bool log_y = false;
  double x0 = 0, x1 = 0;
  int pixels = 0;
  std::vector<double> log_values, log_smooth, log_lo, log_hi;  // when log_y
  double y_min = 0, y_max = 0, x_min = 0, x_max = 0;           // for fitting
  bool has_range = false;
  std::vector<PlotPoint> raw, smooth, lo, hi;
  bool raw_reduced = false;                   // `raw` is filled only while the raw line is drawn
  MinMaxPyramid raw_pyramid, smooth_pyramid;  // built on the first reduction of a version
};

struct PlotSeries {
  std::string label;
  ImU32 color = IM_COL32(90, 160, 255, 255);
  const std::vector<double>* x = nullptr;
  const std::vector<double>* y = nullptr;        // raw values
  const std::vector<double>* smooth = nullptr;   // optional: drawn strong, raw faint
  const std::vector<double>* band_lo = nullptr;  // optional min-max band (same x)
  const std::vector<double>* band_hi = nullptr;
  uint64_t version = 0;  // changes whenever any of the vectors change
  PlotCache* cache = nullptr;
};

struct PlotState {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // the view (y in log10 units when log_y)
  bool auto_fit = true;                   // follow the data until the user zooms or pans
  bool was_log = false;
};

struct PlotOptions {
  const char* x_label = "step";
  bool log_y = false;
  bool show_raw = true;
  size_t raw_up_to = 6;  // more series than this: only the smoothed lines (raw would be a blur)
  float raw_alpha = 0.25f;
};

// What the pointer is on, for the caller (crosshair readouts, tests).
struct PlotHover {
  bool active = false;
  double x = 0;
};

void line_plot(const char* id, PlotState& state, const std::vector<PlotSeries>& series,
               const PlotOptions& options, ImVec2 size, PlotHover* hover = nullptr);

// Distinct colours for runs, by index (the same run keeps its colour in every panel).
ImU32 series_color(size_t index, int alpha = 255);

}  // namespace rlwb::ui
