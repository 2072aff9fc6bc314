// The numeric side of the plots: EMA smoothing, per-pixel min/max
// downsampling, grouping runs into a mean line with a min-max band, and
// axis ticks. Pure functions on plain vectors, unit-tested; the drawing is
// in line_plot.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace rlwb::ui {

struct PlotPoint {
  double x = 0, y = 0;
};

// TensorBoard's smoothing: s_i = w*s_{i-1} + (1-w)*y_i, debiased by
// 1 - w^n so the start is not pulled toward 0. weight 0 returns y; NaN
// points stay NaN and do not disturb the average.
std::vector<double> ema_smooth(std::span<const double> y, double weight);

// [first, last) indices of the points with x in [x0, x1], widened by one
// point on each side so lines run to the plot's edges. x ascending.
std::pair<size_t, size_t> visible_range(std::span<const double> x, double x0, double x1);

// The minimum and maximum of y over aligned blocks of 8, 16, 32, ...
// points, so that the extremes of any index range are found in
// O(log n) steps (about n / 4 indices of memory). Built once per version
// of the data; a zoom then reduces each pixel column without visiting its
// points.
class MinMaxPyramid {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  void build(std::span<const double> y);
  void clear() { min_.clear(), max_.clear(), size_ = 0; }
  size_t size() const { return size_; }  // the points it was built over
  // Indices of the first minimum and the first maximum of y over [first,
  // last), NaN skipped; kNone when all are NaN. `y` is what it was built over.
  std::pair<size_t, size_t> extremes(std::span<const double> y, size_t first, size_t last) const;

 private:
  // level j: block i covers [i << (j + 3), (i + 1) << (j + 3)).
  std::vector<std::vector<uint32_t>> min_, max_;
  size_t size_ = 0;
};

// Reduces the points with x in [x0, x1] to what `pixels` columns can show:
// a column with one or two points keeps them; a column with more keeps its
// minimum and maximum, in the order they occur. So every column's vertical
// extent is exact, and the output has at most 2 * pixels + 2 points however
// many go in. NaN values are skipped. x ascending. Appends to `out`. With
// `pyramid` (built over `y`), a column of many points costs O(log n)
// instead of its points; the output is the same.
void downsample_min_max(std::span<const double> x, std::span<const double> y, double x0, double x1,
                        int pixels, std::vector<PlotPoint>& out, const MinMaxPyramid* pyramid = nullptr);

// Several runs' series of one metric as one line: at every x that any run
// has, the mean, min and max over the runs that have a point there.
struct Band {
  std::vector<double> x, mean, min, max;
};
Band band_over_runs(const std::vector<std::span<const double>>& xs,
                    const std::vector<std::span<const double>>& ys);

// About `target` round-number ticks covering [lo, hi] (1, 2, 5 x 10^k steps).
std::vector<double> nice_ticks(double lo, double hi, int target);
// A tick label: "0.25", "1.5e+06", "12.5k" style, short. With the ticks'
// `step`, enough decimals that neighbouring ticks read differently.
std::string format_tick(double value, double step = 0);

}  // namespace rlwb::ui
