// What kind of value a documented setting takes, and which settings a
// section of the graph file has: what the editor's forms are made from.
// The kind is decoded from the type text that Section writes into its
// SettingDoc ("integer > 0 or null", "one of fixed, adaptive", "list of 2
// numbers"), so that a form can offer the widget that fits: a number field
// with its range, a checkbox, a list of choices. The texts are produced in section.cpp from the constants
// below and decoded here, in one place; a test decodes every setting of docs/settings.md, so a new type text
// that no widget knows fails there.
//
// Kept apart from section.h on purpose: nearly every file includes that
// header, and the forms need this only in the GUI and its tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config/section.h"

namespace rlwb::core::config {

// The type texts Section writes (section.cpp builds them from these).
inline constexpr std::string_view kIntegerType = "integer";
inline constexpr std::string_view kNumberType = "number";
inline constexpr std::string_view kFlagType = "true or false";
inline constexpr std::string_view kTextType = "text";
inline constexpr std::string_view kNamesType = "list of text";
inline constexpr std::string_view kNumbersType = "list of numbers";
inline constexpr std::string_view kChoicePrefix = "one of ";
inline constexpr std::string_view kNullableSuffix = " or null";

enum class SettingKind {
  kInteger,
  kNumber,
  kFlag,
  kText,
  kChoice,
  kNames,    // a list of text, written "a, b" in a form
  kNumbers,  // a list of numbers
  kOther,    // read by another parser (node lists, a tokenizer's forms): edited as YAML
};

struct SettingShape {
  SettingKind kind = SettingKind::kOther;
  bool nullable = false;             // "... or null": empty means the documented default
  std::vector<std::string> choices;  // kChoice
  Range range;                       // kInteger, kNumber
  size_t exact_size = 0;             // kNumbers: "list of 2 numbers"
};

// Decodes `type`; kOther for a text no widget knows.
SettingShape setting_shape(std::string_view type);

// The documented settings of one section of the graph file, as the parse
// reads them (paths in full: "models.actor.config.optim.lr"). A model's
// depend on its role (a reference has no optim); `prefix` is where its
// config sits, "models.<name>.config".
SettingsDoc model_settings(const std::string& role, const std::string& prefix);
SettingsDoc task_settings();
SettingsDoc trainer_settings();

}  // namespace rlwb::core::config
