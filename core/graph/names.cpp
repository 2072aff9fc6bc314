// Name lists, "did you mean" matching and value descriptions for graph
// messages.
#include "core/graph/names.h"

#include <algorithm>
#include <cctype>

namespace rlwb::core::graph_detail {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Optimal string alignment distance: edits, with a swap of neighbours as one.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string list_names(const std::vector<std::string>& names) {
  if (names.empty()) return "(none)";
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::vector<std::string> similar_names(const std::string& name, const std::vector<std::string>& candidates) {
  const std::string wanted = lower(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& candidate : candidates) {
    if (candidate == name) continue;
    const std::string other = lower(candidate);
    std::size_t distance = edit_distance(wanted, other);
    std::size_t shorter = std::min(wanted.size(), other.size());
    bool close = distance <= std::max<std::size_t>(1, shorter / 3);
    bool contains =
        shorter >= 3 && (wanted.find(other) != std::string::npos || other.find(wanted) != std::string::npos);
    if (close || contains) scored.emplace_back(distance, candidate);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> names;
  for (auto& [_, candidate] : scored)
    if (std::find(names.begin(), names.end(), candidate) == names.end()) names.push_back(candidate);
  return names;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  auto similar = similar_names(name, candidates);
  return similar.empty() ? std::string() : " did you mean '" + similar.front() + "'?";
}

std::string describe_value(const nlohmann::json& value) {
  if (value.is_object()) return "a map";
  if (value.is_array()) return "a list";
  if (value.is_null()) return "empty";
  if (value.is_string()) return "text '" + value.get<std::string>() + "'";
  return value.dump();
}

}  // namespace rlwb::core::graph_detail
