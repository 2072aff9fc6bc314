// PNG: signature, IHDR, one IDAT (zlib stream of filtered rows), IEND.
#include "ui/platform/png.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace rlwb::ui {
namespace {

constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

void put_u32(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v >> 24));
  out.push_back(static_cast<char>(v >> 16));
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

uint32_t get_u32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

void put_chunk(std::string& out, const char type[4], const std::string& data) {
  put_u32(out, static_cast<uint32_t>(data.size()));
  std::string body(type, 4);
  body += data;
  out += body;
  put_u32(out, crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size())));
}

uint8_t paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return static_cast<uint8_t>(a);
  return static_cast<uint8_t>(pb <= pc ? b : c);
}

}  // namespace

uint32_t Image::pixel(int x, int y) const {
  const uint8_t* p = &rgba[(static_cast<size_t>(y) * width + x) * 4];
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

void write_png(const std::string& path, const Image& image) {
  if (image.width <= 0 || image.height <= 0 ||
      image.rgba.size() != static_cast<size_t>(image.width) * image.height * 4)
    throw PngError("write_png: image size does not match its pixels");
  // Filter "up" on every row: screenshots are mostly flat areas, so this
  // compresses well and costs one subtraction a byte.
  const size_t stride = static_cast<size_t>(image.width) * 4;
  std::string raw;
  raw.reserve((stride + 1) * image.height);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = &image.rgba[y * stride];
    raw.push_back(y == 0 ? 0 : 2);
    for (size_t i = 0; i < stride; ++i)
      raw.push_back(static_cast<char>(y == 0 ? row[i] : uint8_t(row[i] - row[i - stride])));
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(packed_size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(packed.data()), &packed_size,
                reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 6) != Z_OK)
    throw PngError("write_png: zlib could not compress the image");
  packed.resize(packed_size);

  std::string header;
  put_u32(header, static_cast<uint32_t>(image.width));
  put_u32(header, static_cast<uint32_t>(image.height));
  header += std::string("\x08\x06\x00\x00\x00", 5);  // 8 bits, RGBA, deflate, filters, no interlace
  std::string file(reinterpret_cast<const char*>(kSignature), 8);
  put_chunk(file, "IHDR", header);
  put_chunk(file, "IDAT", packed);
  put_chunk(file, "IEND", "");
  std::ofstream out(path, std::ios::binary);
  out.write(file.data(), static_cast<std::streamsize>(file.size()));
  if (!out) throw PngError("cannot write " + path);
}

Image read_png(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PngError("cannot open " + path);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* data = reinterpret_cast<const uint8_t*>(file.data());
  if (file.size() < 8 || std::memcmp(data, kSignature, 8) != 0) throw PngError(path + " is not a PNG file");
  Image image;
  int channels = 0;
  std::string packed;
  for (size_t pos = 8; pos + 12 <= file.size();) {
    uint32_t length = get_u32(data + pos);
    if (pos + 12 + length > file.size()) throw PngError(path + ": truncated chunk");
    std::string type(file.data() + pos + 4, 4);
    const uint8_t* body = data + pos + 8;
    if (type == "IHDR") {
      image.width = static_cast<int>(get_u32(body));
      image.height = static_cast<int>(get_u32(body + 4));
      if (body[8] != 8 || (body[9] != 2 && body[9] != 6) || body[12] != 0)
        throw PngError(path + ": only 8-bit RGB/RGBA non-interlaced PNGs are read");
      channels = body[9] == 6 ? 4 : 3;
    } else if (type == "IDAT") {
      packed.append(reinterpret_cast<const char*>(body), length);
    } else if (type == "IEND") {
      break;
    }
    pos += 12 + length;
  }
  if (channels == 0 || image.width <= 0 || image.height <= 0) throw PngError(path + ": no IHDR");
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(packed.data()),
                 static_cast<uLong>(packed.size())) != Z_OK ||
      raw_size != raw.size())
    throw PngError(path + ": bad image data");
  std::vector<uint8_t> pixels(stride * image.height);
  for (int y = 0; y < image.height; ++y) {
    uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* src = &raw[y * (stride + 1) + 1];
    uint8_t* row = &pixels[y * stride];
    const uint8_t* up = y > 0 ? row - stride : nullptr;
    for (size_t i = 0; i < stride; ++i) {
      int a = i >= size_t(channels) ? row[i - channels] : 0;
      int b = up ? up[i] : 0;
      int c = (up && i >= size_t(channels)) ? up[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          predictor = 0;
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4:
          predictor = paeth(a, b, c);
          break;
        default:
          throw PngError(path + ": unknown row filter");
      }
      row[i] = static_cast<uint8_t>(src[i] + predictor);
    }
  }
  image.rgba.resize(static_cast<size_t>(image.width) * image.height * 4);
  for (size_t p = 0; p < static_cast<size_t>(image.width) * image.height; ++p) {
    for (int ch = 0; ch < 3; ++ch) image.rgba[p * 4 + ch] = pixels[p * channels + ch];
    image.rgba[p * 4 + 3] = channels == 4 ? pixels[p * 4 + 3] : 255;
  }
  return image;
}

}  // namespace rlwb::ui
