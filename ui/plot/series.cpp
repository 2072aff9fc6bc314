#include "ui/plot/series.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace rlwb::ui {

std::vector<double> ema_smooth(std::span<const double> y, double weight) {
  std::vector<double> out(y.size());
  weight = std::clamp(weight, 0.0, 0.999);
  double last = 0, debias = 1;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i]) || std::isinf(y[i])) {
      out[i] = y[i];
      continue;
    }
    last = last * weight + (1 - weight) * y[i];
    debias *= weight;
    out[i] = weight == 0 ? y[i] : last / (1 - debias);
  }
  return out;
}

std::pair<size_t, size_t> visible_range(std::span<const double> x, double x0, double x1) {
  size_t first = static_cast<size_t>(std::lower_bound(x.begin(), x.end(), x0) - x.begin());
  size_t last = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), x1) - x.begin());
  if (first > 0) --first;
  if (last < x.size()) ++last;
  return {first, std::max(first, last)};
}

void downsample_min_max(std::span<const double> x, std::span<const double> y, double x0, double x1,
                        int pixels, std::vector<PlotPoint>& out) {
  auto [first, last] = visible_range(x, x0, x1);
  if (first >= last || pixels <= 0) return;
  const double scale = x1 > x0 ? pixels / (x1 - x0) : 0;
  auto column_of = [&](double v) {
    double c = std::floor((v - x0) * scale);
    return static_cast<int64_t>(std::clamp(c, -1.0, static_cast<double>(pixels)));
  };
  size_t i = first;
  while (i < last) {
    // One column: [i, j).
    const int64_t column = column_of(x[i]);
    size_t j = i;
    size_t lo = SIZE_MAX, hi = SIZE_MAX, count = 0, only[2] = {SIZE_MAX, SIZE_MAX};
    while (j < last && column_of(x[j]) == column) {
      if (!std::isnan(y[j])) {
        if (count < 2) only[count] = j;
        ++count;
        if (lo == SIZE_MAX || y[j] < y[lo]) lo = j;
        if (hi == SIZE_MAX || y[j] > y[hi]) hi = j;
      }
      ++j;
    }
    if (count == 1) {
      out.push_back({x[only[0]], y[only[0]]});
    } else if (count == 2) {
      out.push_back({x[only[0]], y[only[0]]});
      out.push_back({x[only[1]], y[only[1]]});
    } else if (count > 2) {
      size_t a = std::min(lo, hi), b = std::max(lo, hi);
      out.push_back({x[a], y[a]});
      if (b != a) out.push_back({x[b], y[b]});
    }
    i = j;
  }
}

Band band_over_runs(const std::vector<std::span<const double>>& xs,
                    const std::vector<std::span<const double>>& ys) {
  struct Acc {
    double sum = 0, min = std::numeric_limits<double>::infinity(),
           max = -std::numeric_limits<double>::infinity();
    int n = 0;
  };
  std::map<double, Acc> at;
  for (size_t r = 0; r < xs.size() && r < ys.size(); ++r)
    for (size_t i = 0; i < xs[r].size() && i < ys[r].size(); ++i) {
      double v = ys[r][i];
      if (std::isnan(v)) continue;
      Acc& a = at[xs[r][i]];
      a.sum += v;
      a.min = std::min(a.min, v);
      a.max = std::max(a.max, v);
      ++a.n;
    }
  Band band;
  for (auto& [x, a] : at) {
    band.x.push_back(x);
    band.mean.push_back(a.sum / a.n);
    band.min.push_back(a.min);
    band.max.push_back(a.max);
  }
  return band;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  double raw = (hi - lo) / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string format_tick(double value, double step) {
  char text[32];
  const double a = std::abs(value);
  if (step > 0 && step < 1e4 && a < 1e6) {
    // Decimals from the step (0.0002 -> 4), so 0.00028 and 0.00030 differ.
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 9);
    if (decimals <= 6 || a == 0) {
      std::snprintf(text, sizeof text, "%.*f", decimals, value);
      return text;
    }
  }
  if (a != 0 && (a >= 1e6 || a < 1e-3))
    std::snprintf(text, sizeof text, "%.3g", value);
  else if (a >= 1e4)
    std::snprintf(text, sizeof text, "%.4gk", value / 1000);
  else
    std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

}  // namespace rlwb::ui
