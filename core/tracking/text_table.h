// Aligned plain-text columns for the `rlwb runs` reports (run_report.cpp).
#pragma once

#include <string>
#include <vector>

namespace rlwb::core {

// Columns separated by two spaces, each as wide as its widest cell; every
// line starts with `indent`. No trailing spaces.
std::string render_text_table(const std::vector<std::vector<std::string>>& rows,
                              const std::string& indent = "");

}  // namespace rlwb::core
