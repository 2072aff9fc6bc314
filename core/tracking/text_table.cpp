// Aligned plain-text columns (see text_table.h).
#include "core/tracking/text_table.h"

#include <algorithm>

namespace rlwb::core {
namespace {

// Width on screen, counting UTF-8 code points rather than bytes.
size_t display_width(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; });
}

}  // namespace

std::string render_text_table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t column = 0; column < row.size(); ++column) {
      widths[column] = std::max(widths[column], display_width(row[column]));
    }
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t column = 0; column < row.size(); ++column) {
      line += row[column];
      if (column + 1 < row.size()) line.append(widths[column] - display_width(row[column]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

}  // namespace rlwb::core
