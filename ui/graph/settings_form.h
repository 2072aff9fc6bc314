// A form for one map of the graph file (a model's config, the task, the
// trainer), made from the settings its parse documents
// (core/config/setting_types.h), so the form and the validator can never
// disagree on what exists:
//   - one row per setting: its key, and a widget for its type (a checkbox,
//     a list of choices, a field that takes a number, text or a list);
//   - a setting the file does not write shows its default greyed, and
//     writing it is one click or one field; the x beside a written setting
//     removes it (back to the default);
//   - hovering the key shows the path, type, default and meaning, and for
//     a graph built on another, the base file a setting comes from;
//   - a setting the validator has a problem with is red, with the
//     validator's message under it;
//   - keys the file writes that are no setting (a typo) are listed in red
//     with the validator's message and an x to remove them.
// Every field records itself as "setting/<path>" for scripts and tests.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/config/section.h"
#include "core/graph/experiment.h"

namespace rlwb::ui {

// What a form keeps between frames: the text typed into the field being
// edited (applied when the user leaves it, so one edit is one undo step).
struct SettingsFormState {
  std::string active_path;  // field being typed into
  std::string buffer;
};

struct SettingsFormInput {
  std::string prefix;  // where `section` sits: "models.actor.config", "task"
  const core::config::SettingsDoc* settings = nullptr;
  const std::vector<core::GraphIssue>* issues = nullptr;  // the validator's
  std::string filter;  // only settings whose path contains it (ignoring case)
  // Settings shown as a list of these names instead of a free field
  // (task.name: the tasks this build has).
  std::map<std::string, std::vector<std::string>> choices;
  std::set<std::string> hidden;  // paths edited elsewhere (a phase's nodes: on the canvas)
  // Where a written setting comes from in a graph built on another
  // (`defaults:`): the base file's name while the value is the base's
  // (GraphDocument::setting_origin), else "". Such a key says "from
  // <file>" on hover and is drawn in the inherited colour, so a derived
  // graph shows what it inherits and what it sets itself.
  std::function<std::string(const std::string& path, const nlohmann::json& value)> inherited_from;
};

// What the user did this frame: one setting written or removed. The form
// never changes the document itself, so that the caller can begin a
// gesture first (graph_document.h) and the edit is one undo step.
struct SettingEdit {
  std::string path;                     // relative to the section: "optim.lr"
  std::optional<nlohmann::json> value;  // nullopt: remove (back to the default)
};

// Draws the form for `section` (the map as the document holds it).
std::optional<SettingEdit> draw_settings_form(const nlohmann::json& section, const SettingsFormInput& input,
                                              SettingsFormState& state);
// Applies an edit to the section.
void apply_setting_edit(nlohmann::json& section, const SettingEdit& edit);

// True when a setting of `settings` under `prefix` has `filter` in its path
// (ignoring case), as the form's filter shows it.
bool any_setting_matches(const core::config::SettingsDoc& settings, const std::string& prefix,
                         const std::string& filter);

// The validator's message about `path` (or a key under it), "" when none.
std::string issue_about(const std::vector<core::GraphIssue>& issues, const std::string& path);

}  // namespace rlwb::ui
