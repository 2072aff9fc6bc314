// PNG files for screenshots: a writer for what glReadPixels returns and a
// reader for the tests that look at screenshots. 8-bit RGB/RGBA only, no
// interlace; zlib does the compression. Used by the frame loop
// (--screenshot) and tests/ui.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::ui {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgba;  // row-major, top row first, 4 bytes a pixel

  uint32_t pixel(int x, int y) const;  // 0xRRGGBBAA
};

class PngError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `image` as an RGBA PNG; throws PngError when the file cannot be written.
void write_png(const std::string& path, const Image& image);
// Reads an 8-bit RGB or RGBA, non-interlaced PNG (any filter); throws PngError otherwise.
Image read_png(const std::string& path);

}  // namespace rlwb::ui
