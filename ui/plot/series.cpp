#include "ui/plot/series.h"

#include <algorithm>
#include <bit>
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

namespace {

constexpr int kBlockShift = 3;  // the pyramid's smallest blocks: 8 points

// Keeps the first minimum / maximum: a later candidate wins only when it
// is strictly lower / higher (as a scan from the left does).
void take_lower(std::span<const double> y, size_t candidate, size_t& best) {
  if (candidate != MinMaxPyramid::kNone && (best == MinMaxPyramid::kNone || y[candidate] < y[best]))
    best = candidate;
}
void take_higher(std::span<const double> y, size_t candidate, size_t& best) {
  if (candidate != MinMaxPyramid::kNone && (best == MinMaxPyramid::kNone || y[candidate] > y[best]))
    best = candidate;
}
uint32_t stored(size_t index) {
  return index == MinMaxPyramid::kNone ? UINT32_MAX : static_cast<uint32_t>(index);
}
size_t loaded(uint32_t index) { return index == UINT32_MAX ? MinMaxPyramid::kNone : index; }

}  // namespace

void MinMaxPyramid::build(std::span<const double> y) {
  clear();
  size_ = y.size();
  if (y.size() >= UINT32_MAX) return;  // no pyramid: extremes() scans
  for (int level = 0; (size_t{1} << (level + kBlockShift)) <= y.size(); ++level) {
    const size_t blocks = y.size() >> (level + kBlockShift);
    std::vector<uint32_t> lows(blocks), highs(blocks);
    for (size_t b = 0; b < blocks; ++b) {
      size_t lo = kNone, hi = kNone;
      if (level == 0) {
        for (size_t i = b << kBlockShift; i < (b + 1) << kBlockShift; ++i)
          if (!std::isnan(y[i])) take_lower(y, i, lo), take_higher(y, i, hi);
      } else {
        for (size_t half : {2 * b, 2 * b + 1})
          take_lower(y, loaded(min_.back()[half]), lo), take_higher(y, loaded(max_.back()[half]), hi);
      }
      lows[b] = stored(lo), highs[b] = stored(hi);
    }
    min_.push_back(std::move(lows));
    max_.push_back(std::move(highs));
  }
}

std::pair<size_t, size_t> MinMaxPyramid::extremes(std::span<const double> y, size_t first,
                                                  size_t last) const {
  size_t lo = kNone, hi = kNone;
  size_t i = first;
  while (i < last) {
    // The largest block that starts at i and ends by `last`, if any.
    int level = -1;
    if (!min_.empty() && i % (size_t{1} << kBlockShift) == 0) {
      const int aligned = (i == 0 ? 63 : std::countr_zero(i)) - kBlockShift;
      const int fits = std::bit_width(last - i) - 1 - kBlockShift;
      level = std::min({aligned, fits, static_cast<int>(min_.size()) - 1});
      if (level >= 0 && (i >> (level + kBlockShift)) >= min_[level].size()) level = -1;
    }
    if (level < 0) {
      if (!std::isnan(y[i])) take_lower(y, i, lo), take_higher(y, i, hi);
      ++i;
      continue;
    }
    const size_t block = i >> (level + kBlockShift);
    take_lower(y, loaded(min_[level][block]), lo);
    take_higher(y, loaded(max_[level][block]), hi);
    i += size_t{1} << (level + kBlockShift);
  }
  return {lo, hi};
}

void downsample_min_max(std::span<const double> x, std::span<const double> y, double x0, double x1,
                        int pixels, std::vector<PlotPoint>& out, const MinMaxPyramid* pyramid) {
  auto [first, last] = visible_range(x, x0, x1);
  if (first >= last || pixels <= 0) return;
  if (pyramid && pyramid->size() != y.size()) pyramid = nullptr;  // built over other data
  const double scale = x1 > x0 ? pixels / (x1 - x0) : 0;
  auto column_of = [&](double v) {
    double c = std::floor((v - x0) * scale);
    return static_cast<int64_t>(std::clamp(c, -1.0, static_cast<double>(pixels)));
  };
  // Columns of more points than this are reduced through the pyramid.
  constexpr size_t kPyramidFrom = 16;
  size_t i = first;
  while (i < last) {
    // One column: [i, j).
    const int64_t column = column_of(x[i]);
    size_t j = i + 1;
    while (j < last && column_of(x[j]) == column && (!pyramid || j - i < 4)) ++j;
    if (pyramid && j - i == 4) {
      // A long column: gallop to its end (column_of is monotone in x), then bisect.
      size_t step = 1, below = j - 1;  // x[below] is in the column
      while (j < last && column_of(x[j]) == column) below = j, j = std::min(last, j + (step *= 2));
      j = static_cast<size_t>(std::partition_point(x.begin() + below + 1, x.begin() + j,
                                                   [&](double v) { return column_of(v) == column; }) -
                              x.begin());
    }
    if (pyramid && j - i > kPyramidFrom) {
      auto [lo, hi] = pyramid->extremes(y, i, j);
      if (lo != MinMaxPyramid::kNone) {
        const size_t a = std::min(lo, hi), b = std::max(lo, hi);
        out.push_back({x[a], y[a]});
        if (b != a) out.push_back({x[b], y[b]});
      }
      i = j;
      continue;
    }
    size_t lo = SIZE_MAX, hi = SIZE_MAX, count = 0, only[2] = {SIZE_MAX, SIZE_MAX};
    for (size_t k = i; k < j; ++k) {
      if (!std::isnan(y[k])) {
        if (count < 2) only[count] = k;
        ++count;
        if (lo == SIZE_MAX || y[k] < y[lo]) lo = k;
        if (hi == SIZE_MAX || y[k] > y[hi]) hi = k;
      }
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
