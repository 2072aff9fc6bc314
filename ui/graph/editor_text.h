// How the editor reads what is typed into its fields: a comma-separated
// list ("a, b" or "[a, b]"), and a case-blind search for text in a name
// (the node search and the settings filter).
#pragma once

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace rlwb::ui {

// The items of "a, b" (blanks and brackets around each item dropped, empty
// items skipped).
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    auto a = part.find_first_not_of(" \t[]"), b = part.find_last_not_of(" \t[]");
    if (a != std::string::npos) out.push_back(part.substr(a, b - a + 1));
  }
  return out;
}

inline std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// True when `text` holds `part`, ignoring case.
inline bool contains_ignoring_case(const std::string& text, const std::string& part) {
  return lower_case(text).find(lower_case(part)) != std::string::npos;
}

}  // namespace rlwb::ui
