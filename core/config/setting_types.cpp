#include "core/config/setting_types.h"

#include <cstdlib>

#include "core/config/model_options.h"
#include "core/config/task_options.h"
#include "core/config/trainer_options.h"

namespace rlwb::core::config {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

// The rest of `text` after `prefix`, or nullopt when it does not start so.
std::optional<std::string_view> after(std::string_view text, std::string_view prefix) {
  if (!starts_with(text, prefix)) return std::nullopt;
  return text.substr(prefix.size());
}

bool parse_number(std::string_view text, double& out) {
  std::string s(text);
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

// Range::describe() read back: "", ">= 0", "> 0", "<= 1", "in [0, 1]".
bool parse_range(std::string_view text, Range& range) {
  while (starts_with(text, " ")) text.remove_prefix(1);
  if (text.empty()) return true;
  double a = 0, b = 0;
  if (auto rest = after(text, "in [")) {
    const size_t comma = rest->find(", ");
    if (comma == std::string_view::npos || rest->empty() || rest->back() != ']') return false;
    if (!parse_number(rest->substr(0, comma), a) ||
        !parse_number(rest->substr(comma + 2, rest->size() - comma - 3), b))
      return false;
    range = between(a, b);
    return true;
  }
  if (auto rest = after(text, ">= ")) return parse_number(*rest, a) && (range = at_least(a), true);
  if (auto rest = after(text, "> ")) return parse_number(*rest, a) && (range = above(a), true);
  if (auto rest = after(text, "<= ")) return parse_number(*rest, a) && (range.max = a, true);
  return false;
}

SettingsDoc documented(void (*parse)(ParseContext&)) {
  SettingsDoc doc;
  ParseContext ctx(nullptr, &doc);
  parse(ctx);
  return doc;
}

}  // namespace

SettingShape setting_shape(std::string_view type) {
  SettingShape shape;
  if (type.size() > kNullableSuffix.size() &&
      type.substr(type.size() - kNullableSuffix.size()) == kNullableSuffix) {
    shape.nullable = true;
    type.remove_suffix(kNullableSuffix.size());
  }
  if (type == kFlagType) return shape.kind = SettingKind::kFlag, shape;
  if (type == kTextType) return shape.kind = SettingKind::kText, shape;
  if (type == kNamesType) return shape.kind = SettingKind::kNames, shape;
  if (type == kNumbersType) return shape.kind = SettingKind::kNumbers, shape;
  if (auto names = after(type, kChoicePrefix)) {
    shape.kind = SettingKind::kChoice;
    while (!names->empty()) {
      const size_t comma = names->find(", ");
      shape.choices.emplace_back(names->substr(0, comma));
      names->remove_prefix(comma == std::string_view::npos ? names->size() : comma + 2);
    }
    return shape;
  }
  // "list of 2 numbers"
  if (auto rest = after(type, "list of ")) {
    const size_t space = rest->find(' ');
    double n = 0;
    if (space != std::string_view::npos && rest->substr(space) == " numbers" &&
        parse_number(rest->substr(0, space), n) && n >= 1) {
      shape.kind = SettingKind::kNumbers;
      shape.exact_size = static_cast<size_t>(n);
      return shape;
    }
    return shape;
  }
  for (auto [name, kind] :
       {std::pair{kIntegerType, SettingKind::kInteger}, {kNumberType, SettingKind::kNumber}})
    if (auto rest = after(type, name); rest && (rest->empty() || starts_with(*rest, " ")))
      if (parse_range(*rest, shape.range)) return shape.kind = kind, shape;
  return SettingShape{};
}

SettingsDoc model_settings(const std::string& role, const std::string& prefix) {
  SettingsDoc doc;
  ParseContext ctx(nullptr, &doc);
  parse_model_options(role, nlohmann::json::object(), prefix, ctx);
  return doc;
}

SettingsDoc task_settings() {
  return documented([](ParseContext& ctx) { parse_task_options(nlohmann::json::object(), ctx); });
}

SettingsDoc trainer_settings() {
  return documented([](ParseContext& ctx) { parse_trainer_options(nlohmann::json::object(), ctx); });
}

}  // namespace rlwb::core::config
