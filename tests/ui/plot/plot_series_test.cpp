// EMA smoothing, per-pixel min/max downsampling, run bands, axis ticks.
#include <gtest/gtest.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "ui/plot/series.h"

namespace rlwb::ui {
namespace {

TEST(EmaSmooth, ZeroWeightReturnsTheValues) {
  std::vector<double> y = {1, 5, -2, 7};
  EXPECT_EQ(ema_smooth(y, 0.0), y);
}

TEST(EmaSmooth, DebiasedSoAConstantSeriesStaysConstant) {
  std::vector<double> y(50, 3.0);
  for (double v : ema_smooth(y, 0.9)) EXPECT_NEAR(v, 3.0, 1e-12);
}

TEST(EmaSmooth, MatchesHandComputedValues) {
  // w = 0.5: s1 = 0.5*1 / (1-0.5) = 1; s2 = (0.25 + 0.5*3) / (1-0.25) = 7/3.
  auto s = ema_smooth(std::vector<double>{1, 3}, 0.5);
  EXPECT_NEAR(s[0], 1.0, 1e-12);
  EXPECT_NEAR(s[1], 7.0 / 3.0, 1e-12);
}

TEST(EmaSmooth, NanPointsStayNanAndDoNotDisturbTheAverage) {
  auto with_nan = ema_smooth(std::vector<double>{1, NAN, 3}, 0.5);
  auto without = ema_smooth(std::vector<double>{1, 3}, 0.5);
  EXPECT_TRUE(std::isnan(with_nan[1]));
  EXPECT_NEAR(with_nan[2], without[1], 1e-12);
}

TEST(VisibleRange, WidensByOnePointEachSide) {
  std::vector<double> x = {0, 1, 2, 3, 4, 5};
  auto [a, b] = visible_range(x, 2, 3);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 5u);
  auto [c, d] = visible_range(x, -10, 100);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ(d, 6u);
}

TEST(DownsampleMinMax, KeepsEveryPointWhenThereAreFewerThanPixels) {
  std::vector<double> x = {0, 1, 2, 3}, y = {4, 1, 3, 2};
  std::vector<PlotPoint> out;
  downsample_min_max(x, y, 0, 3, 1000, out);
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].y, y[i]);
}

TEST(DownsampleMinMax, AMillionPointsBecomeAtMostTwoPerPixelWithEachColumnsExtremes) {
  const size_t n = 1'000'000;
  const int pixels = 800;
  std::vector<double> x(n), y(n);
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 1);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<double>(i), y[i] = std::sin(i * 1e-4) + noise(rng);
  std::vector<PlotPoint> out;
  auto start = std::chrono::steady_clock::now();
  downsample_min_max(x, y, 0, n - 1, pixels, out);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(out.size(), 2u * pixels + 2);
  EXPECT_GE(out.size(), static_cast<size_t>(pixels));
  // Every column's min and max survive: check a few columns by brute force.
  const double scale = pixels / static_cast<double>(n - 1);  // as the reduction maps x to columns
  for (int column : {0, 17, 399, 799}) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; ++i)
      if (static_cast<int>(std::floor(x[i] * scale)) == column)
        lo = std::min(lo, y[i]), hi = std::max(hi, y[i]);
    bool has_lo = false, has_hi = false;
    for (const auto& p : out) has_lo |= p.y == lo, has_hi |= p.y == hi;
    EXPECT_TRUE(has_lo && has_hi) << "column " << column;
  }
  // The global extremes too (what the eye checks first).
  EXPECT_EQ(std::min_element(out.begin(), out.end(), [](auto& a, auto& b) { return a.y < b.y; })->y,
            *std::min_element(y.begin(), y.end()));
  EXPECT_LT(ms, 100.0) << "downsampling a million points must not stall a frame";
  // Points stay in x order, so the polyline does not zigzag back.
  for (size_t i = 1; i < out.size(); ++i) EXPECT_LE(out[i - 1].x, out[i].x);
}

TEST(DownsampleMinMax, OnlyTheVisibleRangeIsReduced) {
  std::vector<double> x, y;
  for (int i = 0; i < 10000; ++i) x.push_back(i), y.push_back(i);
  std::vector<PlotPoint> out;
  downsample_min_max(x, y, 5000, 5100, 100, out);
  ASSERT_FALSE(out.empty());
  EXPECT_GE(out.front().x, 4999);
  EXPECT_LE(out.back().x, 5101);
}

TEST(DownsampleMinMax, SkipsNan) {
  std::vector<double> x = {0, 1, 2}, y = {1, NAN, 3};
  std::vector<PlotPoint> out;
  downsample_min_max(x, y, 0, 2, 100, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].y, 3);
}

// The definition: every visible point's pixel column computed on its own.
std::vector<PlotPoint> reference_min_max(const std::vector<double>& x, const std::vector<double>& y,
                                         double x0, double x1, int pixels) {
  std::vector<PlotPoint> out;
  auto [first, last] = visible_range(x, x0, x1);
  const double scale = x1 > x0 ? pixels / (x1 - x0) : 0;
  auto column_of = [&](double v) {
    return static_cast<int64_t>(std::clamp(std::floor((v - x0) * scale), -1.0, double(pixels)));
  };
  std::map<int64_t, std::vector<size_t>> columns;  // column -> indices with a value
  std::vector<int64_t> order;
  for (size_t i = first; i < last; ++i) {
    int64_t c = column_of(x[i]);
    if (columns.find(c) == columns.end()) order.push_back(c);
    auto& in_column = columns[c];
    if (!std::isnan(y[i])) in_column.push_back(i);
  }
  for (int64_t c : order) {
    const auto& idx = columns[c];
    if (idx.size() <= 2) {
      for (size_t i : idx) out.push_back({x[i], y[i]});
      continue;
    }
    size_t lo = idx[0], hi = idx[0];
    for (size_t i : idx) {
      if (y[i] < y[lo]) lo = i;
      if (y[i] > y[hi]) hi = i;
    }
    out.push_back({x[std::min(lo, hi)], y[std::min(lo, hi)]});
    if (lo != hi) out.push_back({x[std::max(lo, hi)], y[std::max(lo, hi)]});
  }
  return out;
}

TEST(DownsampleMinMax, MatchesTheDefinitionOnRaggedSeries) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-1, 1);
  for (int trial = 0; trial < 40; ++trial) {
    // Steps with gaps and repeats, values with NaNs, views zoomed anywhere.
    std::vector<double> x, y;
    double step = 0;
    const int n = 50 + trial * 300;
    for (int i = 0; i < n; ++i) {
      step += (rng() % 7 == 0) ? 0 : 1 + rng() % 5;
      x.push_back(step);
      y.push_back(rng() % 13 == 0 ? NAN : noise(rng) + std::sin(i * 0.01));
    }
    const double span = x.back() - x.front();
    const double x0 = x.front() + span * (trial % 5) * 0.1, x1 = x0 + span * (0.05 + (trial % 4) * 0.3);
    const int pixels = 7 + trial * 13;
    std::vector<PlotPoint> out;
    downsample_min_max(x, y, x0, x1, pixels, out);
    const auto expected = reference_min_max(x, y, x0, x1, pixels);
    ASSERT_EQ(out.size(), expected.size()) << "trial " << trial;
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].x, expected[i].x) << "trial " << trial << " point " << i;
      EXPECT_EQ(out[i].y, expected[i].y) << "trial " << trial << " point " << i;
    }
  }
}

TEST(DownsampleMinMax, ThroughAPyramidGivesTheSamePointsAsTheDefinition) {
  // Dense columns (up to hundreds of points each, where the pyramid is
  // used), ragged steps, single NaNs and long NaN stretches.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> noise(-1, 1);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> x, y;
    double step = 0;
    const int n = 1000 + trial * 2000;
    for (int i = 0; i < n; ++i) {
      step += (rng() % 7 == 0) ? 0 : 1 + rng() % 3;
      x.push_back(step);
      const bool gap = (i / 500) % 9 == 4 || rng() % 13 == 0;
      y.push_back(gap ? NAN : noise(rng) + std::sin(i * 0.01));
    }
    MinMaxPyramid pyramid;
    pyramid.build(y);
    const double span = x.back() - x.front();
    const double x0 = x.front() + span * (trial % 5) * 0.1 - 3, x1 = x0 + span * (0.05 + (trial % 4) * 0.3);
    const int pixels = 5 + trial * 7;
    std::vector<PlotPoint> out;
    downsample_min_max(x, y, x0, x1, pixels, out, &pyramid);
    const auto expected = reference_min_max(x, y, x0, x1, pixels);
    ASSERT_EQ(out.size(), expected.size()) << "trial " << trial;
    for (size_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].x, expected[i].x) << "trial " << trial << " point " << i;
      EXPECT_EQ(out[i].y, expected[i].y) << "trial " << trial << " point " << i;
    }
  }
}

TEST(MinMaxPyramid, FindsTheFirstExtremesOfAnyRange) {
  std::mt19937 rng(3);
  std::vector<double> y(1000);
  for (double& v : y) v = static_cast<double>(rng() % 20);  // many ties
  for (int i = 300; i < 420; ++i) y[i] = NAN;
  MinMaxPyramid pyramid;
  pyramid.build(y);
  EXPECT_EQ(pyramid.size(), y.size());
  for (int trial = 0; trial < 2000; ++trial) {
    size_t a = rng() % y.size(), b = rng() % (y.size() + 1);
    if (a > b) std::swap(a, b);
    size_t lo = MinMaxPyramid::kNone, hi = MinMaxPyramid::kNone;
    for (size_t i = a; i < b; ++i) {
      if (std::isnan(y[i])) continue;
      if (lo == MinMaxPyramid::kNone || y[i] < y[lo]) lo = i;
      if (hi == MinMaxPyramid::kNone || y[i] > y[hi]) hi = i;
    }
    EXPECT_EQ(pyramid.extremes(y, a, b), std::make_pair(lo, hi)) << "[" << a << ", " << b << ")";
  }
  EXPECT_EQ(pyramid.extremes(y, 320, 400), std::make_pair(MinMaxPyramid::kNone, MinMaxPyramid::kNone))
      << "all NaN";
}

TEST(DownsampleMinMax, APyramidBuiltOverOtherDataIsNotUsed) {
  std::vector<double> x, y, other(50, 1000.0);
  for (int i = 0; i < 100; ++i) x.push_back(i), y.push_back(i == 3 ? -5 : i);
  MinMaxPyramid pyramid;
  pyramid.build(other);
  std::vector<PlotPoint> out;
  downsample_min_max(x, y, 0, 99, 1, out, &pyramid);  // columns: [0, 99) and {99}
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].y, -5);
  EXPECT_EQ(out[1].y, 98);
  EXPECT_EQ(out[2].y, 99);
}

TEST(BandOverRuns, MeanMinMaxAtEveryStepAnyRunHas) {
  std::vector<double> x1 = {0, 1, 2}, y1 = {1, 2, 3};
  std::vector<double> x2 = {0, 1}, y2 = {3, 6};
  Band b = band_over_runs({x1, x2}, {y1, y2});
  ASSERT_EQ(b.x, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(b.mean, (std::vector<double>{2, 4, 3}));
  EXPECT_EQ(b.min, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(b.max, (std::vector<double>{3, 6, 3}));
}

TEST(NiceTicks, RoundNumbersCoveringTheRange) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  auto t = nice_ticks(0.013, 0.087, 4);
  ASSERT_FALSE(t.empty());
  EXPECT_NEAR(t.front(), 0.02, 1e-12);
  EXPECT_TRUE(nice_ticks(1, 1, 5).empty());
}

TEST(FormatTick, NeighbouringTicksReadDifferently) {
  EXPECT_EQ(format_tick(0.00028, 0.00002), "0.00028");
  EXPECT_EQ(format_tick(0.00030, 0.00002), "0.00030");
  EXPECT_EQ(format_tick(5000, 1000), "5000");
  EXPECT_EQ(format_tick(0.25, 0.05), "0.25");
  EXPECT_EQ(format_tick(12500), "12.5k");
  EXPECT_EQ(format_tick(2e-5), "2e-05");
}

}  // namespace
}  // namespace rlwb::ui
