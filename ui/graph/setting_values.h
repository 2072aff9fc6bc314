// A setting's value inside its section's JSON, and the text a form field
// shows for it: reading, writing and removing a setting by its dotted path
// relative to the section ("optim.lr" in a model's config), and turning
// what the user typed into the value to store.
//
// What was typed is stored even when it does not fit the setting's type (a
// word in a number field): the validator then marks the field with its
// own message, so the form never has a second, different idea of what is
// valid.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/config/setting_types.h"

namespace rlwb::ui {

// The value at `path` ("optim.lr"), or null when it is not written.
const nlohmann::json* find_setting(const nlohmann::json& section, const std::string& path);
// Writes `value` at `path`, making the maps on the way.
void set_setting(nlohmann::json& section, const std::string& path, nlohmann::json value);
// Removes `path` (the setting takes its default again) and the maps on the
// way that are left empty. False when it was not written.
bool remove_setting(nlohmann::json& section, const std::string& path);

// What a field shows for a written value: 3, 0.001, a, b (names), 0.9, 0.999
// (numbers), text as it is, anything else as JSON.
std::string setting_text(const nlohmann::json& value);
// The value to store for `text` typed into a field of `shape`: numbers for
// number fields, a list for lists ("a, b"), null for "null" where the
// setting may be null, JSON for kOther (else the text); `text` itself when
// it does not read as the type.
nlohmann::json setting_value(const core::config::SettingShape& shape, const std::string& text);

}  // namespace rlwb::ui
