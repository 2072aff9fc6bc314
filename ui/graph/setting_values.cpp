#include "ui/graph/setting_values.h"

#include "ui/graph/editor_text.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

namespace rlwb::ui {
namespace {

using core::config::SettingKind;
using nlohmann::json;

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  return parts;
}

std::string trimmed(const std::string& text) {
  const auto a = text.find_first_not_of(" \t"), b = text.find_last_not_of(" \t");
  return a == std::string::npos ? "" : text.substr(a, b - a + 1);
}

// A number when the whole text reads as one; integers stay integers.
std::optional<json> as_number(const std::string& text) {
  const std::string s = trimmed(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0') return json(static_cast<int64_t>(i));
  const double d = std::strtod(s.c_str(), &end);
  if (*end == '\0' && std::isfinite(d)) return json(d);
  return std::nullopt;
}

}  // namespace

const json* find_setting(const json& section, const std::string& path) {
  const json* at = &section;
  for (const std::string& key : split_path(path)) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

void set_setting(json& section, const std::string& path, json value) {
  json* at = &section;
  for (const std::string& key : split_path(path)) {
    if (!at->is_object()) *at = json::object();
    at = &(*at)[key];
  }
  *at = std::move(value);
}

bool remove_setting(json& section, const std::string& path) {
  const std::vector<std::string> parts = split_path(path);
  if (parts.empty()) return false;
  std::vector<json*> chain = {&section};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    json* parent = chain.back();
    if (!parent->is_object() || !parent->contains(parts[i])) return false;
    chain.push_back(&(*parent)[parts[i]]);
  }
  if (!chain.back()->is_object() || chain.back()->erase(parts.back()) == 0) return false;
  // Maps that only held the removed setting go too: `optim: {}` says nothing.
  for (size_t i = chain.size() - 1; i > 0; --i) {
    if (!chain[i]->is_object() || !chain[i]->empty()) break;
    chain[i - 1]->erase(parts[i - 1]);
  }
  return true;
}

std::string setting_text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    bool scalars = true;
    for (const json& item : value) scalars = scalars && (item.is_string() || item.is_number());
    if (scalars) {
      std::string text;
      for (const json& item : value) text += (text.empty() ? "" : ", ") + setting_text(item);
      return text;
    }
  }
  return value.dump();
}

json setting_value(const core::config::SettingShape& shape, const std::string& text) {
  const std::string s = trimmed(text);
  if (shape.nullable && s == "null") return nullptr;
  switch (shape.kind) {
    case SettingKind::kInteger:
    case SettingKind::kNumber:
      if (auto n = as_number(s)) return *n;
      return s;
    case SettingKind::kFlag:
      if (s == "true" || s == "false") return s == "true";
      return s;
    case SettingKind::kNames: {
      json list = json::array();
      for (const auto& item : split_list(s)) list.push_back(item);
      return list;
    }
    case SettingKind::kNumbers: {
      json list = json::array();
      for (const auto& item : split_list(s)) list.push_back(as_number(item).value_or(json(item)));
      return list;
    }
    case SettingKind::kOther: {
      json parsed = json::parse(s, nullptr, /*allow_exceptions=*/false);
      return parsed.is_discarded() ? json(text) : parsed;
    }
    case SettingKind::kText:
    case SettingKind::kChoice:
      break;
  }
  return text;
}

}  // namespace rlwb::ui
