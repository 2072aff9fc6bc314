// A layer's lines drawn on the CPU (ui/platform/line_raster.h): GL's
// aliased-line pixels, joints lit once, widths, "over" blending, clipping.
#include "ui/platform/line_raster.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

namespace rlwb::ui {
namespace {

constexpr ImU32 kBlue = IM_COL32(31, 119, 180, 255);

LineImage draw(std::vector<ImVec2> points, ImU32 color, float thickness = 1, int width = 8, int height = 8,
               ImVec2 origin = ImVec2(0, 0)) {
  LayerLines lines;
  lines.add(points, color, thickness);
  LineImage image;
  rasterize_lines(lines, origin, width, height, image);
  return image;
}

int lit_in_row(const LineImage& image, int y) {
  int n = 0;
  for (int x = 0; x < image.width; ++x) n += image.at(x, y) != 0;
  return n;
}

uint32_t alpha(uint32_t pixel) { return pixel >> IM_COL32_A_SHIFT; }

TEST(LineRaster, AHorizontalSegmentLightsItsRowFromTheFirstPointUpToTheLast) {
  // From the centre of pixel (1, 2) to the centre of pixel (6, 2).
  const LineImage image = draw({{1.5f, 2.5f}, {6.5f, 2.5f}}, kBlue);
  for (int x = 1; x <= 5; ++x) EXPECT_EQ(image.at(x, 2), kBlue) << "x " << x;
  EXPECT_EQ(image.at(0, 2), 0u);
  EXPECT_EQ(image.at(6, 2), 0u) << "the last point's pixel belongs to the next segment";
  EXPECT_EQ(lit_in_row(image, 1) + lit_in_row(image, 3), 0);
}

TEST(LineRaster, ASteepSegmentLightsOnePixelARow) {
  const LineImage image = draw({{2.2f, 0.5f}, {4.8f, 7.5f}}, kBlue);
  for (int y = 0; y < 7; ++y) EXPECT_EQ(lit_in_row(image, y), 1) << "row " << y;
  EXPECT_EQ(image.at(2, 0), kBlue);
  EXPECT_EQ(image.at(4, 6), kBlue);
}

TEST(LineRaster, APolylinesJointIsLitOnce) {
  // Half-transparent: a pixel lit twice would be more opaque.
  const ImU32 faint = IM_COL32(255, 0, 0, 128);
  const LineImage image = draw({{0.5f, 2.5f}, {4.5f, 2.5f}, {4.5f, 7.5f}}, faint);
  EXPECT_EQ(alpha(image.at(4, 2)), 128u);
  EXPECT_EQ(alpha(image.at(2, 2)), 128u);
  EXPECT_EQ(alpha(image.at(4, 5)), 128u);
}

TEST(LineRaster, AWiderLineLightsThatManyRows) {
  const LineImage image = draw({{0.5f, 4.2f}, {7.5f, 4.2f}}, kBlue, 2);
  EXPECT_EQ(lit_in_row(image, 3), 7);
  EXPECT_EQ(lit_in_row(image, 4), 7);
  EXPECT_EQ(lit_in_row(image, 2) + lit_in_row(image, 5), 0);
}

TEST(LineRaster, LaterLinesBlendOverEarlierOnesWithPremultipliedColours) {
  LayerLines lines;
  const ImVec2 row[] = {{0.5f, 1.5f}, {7.5f, 1.5f}};
  lines.add(row, IM_COL32(255, 0, 0, 255), 1);
  lines.add(row, IM_COL32(0, 0, 255, 128), 1);  // half blue over opaque red
  LineImage image;
  rasterize_lines(lines, ImVec2(0, 0), 8, 4, image);
  const uint32_t p = image.at(3, 1);
  EXPECT_NEAR(static_cast<int>((p >> IM_COL32_R_SHIFT) & 0xFF), 127, 1);
  EXPECT_EQ((p >> IM_COL32_G_SHIFT) & 0xFF, 0u);
  EXPECT_NEAR(static_cast<int>((p >> IM_COL32_B_SHIFT) & 0xFF), 128, 1);
  EXPECT_EQ(alpha(p), 255u);
  // Alone, the half-transparent line is stored premultiplied.
  const LineImage alone = draw({{0.5f, 1.5f}, {7.5f, 1.5f}}, IM_COL32(0, 0, 255, 128));
  EXPECT_EQ(alone.at(3, 1), IM_COL32(0, 0, 128, 128));
}

TEST(LineRaster, PointsAreInScreenCoordinatesFromTheOrigin) {
  const LineImage image = draw({{101.5f, 52.5f}, {106.5f, 52.5f}}, kBlue, 1, 8, 8, ImVec2(100, 50));
  EXPECT_EQ(image.at(1, 2), kBlue);
  EXPECT_EQ(lit_in_row(image, 2), 5);
}

TEST(LineRaster, FarAwayPointsAreClippedNotWalked) {
  // A zoomed-in view keeps one point far beyond each edge.
  const auto start = std::chrono::steady_clock::now();
  const LineImage image = draw({{-1e9f, 3.5f}, {1e9f, 3.5f}}, kBlue, 1, 64, 8);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_EQ(lit_in_row(image, 3), 64);
  // Steep and far: from far above to far below, through column 10.
  const LineImage steep = draw({{10.5f, -1e9f}, {10.5f, 1e9f}}, kBlue, 1, 64, 8);
  for (int y = 0; y < 8; ++y) EXPECT_EQ(steep.at(10, y), kBlue) << "row " << y;
}

TEST(LineRaster, SegmentsWithANonFinitePointAreSkipped) {
  const LineImage image = draw({{0.5f, 1.5f}, {3.5f, NAN}, {7.5f, 1.5f}, {7.5f, 6.5f}}, kBlue);
  EXPECT_EQ(lit_in_row(image, 1), 1) << "only the first pixel of the last segment";
  EXPECT_EQ(image.at(7, 1), kBlue);
  EXPECT_EQ(image.at(7, 3), kBlue) << "the finite segment after them is drawn";
}

TEST(LineRaster, ABackgroundFillsTheImageUnderTheLines) {
  LayerLines lines;
  const ImVec2 row[] = {{0.5f, 1.5f}, {7.5f, 1.5f}};
  lines.add(row, IM_COL32(0, 0, 255, 128), 1);
  LineImage image;
  rasterize_lines(lines, ImVec2(0, 0), 8, 4, image, IM_COL32(16, 17, 20, 255));
  EXPECT_EQ(image.at(0, 0), IM_COL32(16, 17, 20, 255));
  EXPECT_EQ(image.at(3, 1), IM_COL32(8, 8, 138, 255)) << "half blue over the background";
}

TEST(LineRaster, AnEmptyImageDrawsNothing) {
  const LineImage image = draw({{0, 0}, {10, 10}}, kBlue, 1, 0, 0);
  EXPECT_TRUE(image.pixels.empty());
}

}  // namespace
}  // namespace rlwb::ui
