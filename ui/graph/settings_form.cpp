#include "ui/graph/settings_form.h"

#include <algorithm>

#include "core/config/setting_types.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/graph/editor_text.h"
#include "ui/graph/setting_values.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {
namespace {

using core::config::SettingDoc;
using core::config::SettingKind;
using core::config::SettingShape;
using nlohmann::json;

const ImVec4 kProblem(1, 0.45f, 0.4f, 1);
const ImVec4 kInherited(0.55f, 0.75f, 1, 1);

// `text` cut to fit `width` pixels, ending in ".." when cut (the tooltip
// has the whole key).
std::string fitted(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  std::string cut = text;
  while (!cut.empty() && ImGui::CalcTextSize((cut + "..").c_str()).x > width) cut.pop_back();
  return cut + "..";
}

void key_tooltip(const std::string& path, const std::string& type, const std::string& default_value,
                 const std::string& doc, const std::string& problem, const std::string& base = "") {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
  ImGui::TextUnformatted(path.c_str());
  if (!base.empty()) ImGui::TextColored(kInherited, "from %s (set it here to override)", base.c_str());
  if (!type.empty()) ImGui::TextDisabled("%s", type.c_str());
  if (!default_value.empty()) ImGui::TextDisabled("default: %s", default_value.c_str());
  if (!doc.empty()) ImGui::TextWrapped("%s", doc.c_str());
  if (!problem.empty()) ImGui::TextColored(kProblem, "%s", problem.c_str());
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

// The validator's message under a setting, recorded for scripts.
void problem_line(const std::string& path, const std::string& problem) {
  if (problem.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, kProblem);
  ImGui::TextWrapped("%s", problem.c_str());
  ImGui::PopStyleColor();
  items().record_last_item("setting_problem/" + path);
}

// A field typed into and applied when the user leaves it; empty text
// removes the setting.
std::optional<SettingEdit> text_field(const std::string& path, const std::string& rel, const json* value,
                                      const SettingShape& shape, const std::string& hint,
                                      SettingsFormState& state) {
  const std::string shown = value ? setting_text(*value) : "";
  std::string scratch = shown;
  const bool active = state.active_path == path;
  std::string& buffer = active ? state.buffer : scratch;
  ImGui::InputTextWithHint("##value", hint.c_str(), &buffer);
  if (ImGui::IsItemActivated()) state.active_path = path, state.buffer = shown;
  if (ImGui::IsItemDeactivatedAfterEdit()) {
    const std::string typed = active ? state.buffer : scratch;
    state.active_path.clear();
    if (typed == shown) return std::nullopt;
    if (typed.empty()) return SettingEdit{rel, std::nullopt};
    return SettingEdit{rel, setting_value(shape, typed)};
  }
  if (ImGui::IsItemDeactivated()) state.active_path.clear();
  return std::nullopt;
}

std::optional<SettingEdit> value_widget(const std::string& path, const std::string& rel, const json* value,
                                        const SettingShape& shape, const std::string& default_value,
                                        SettingsFormState& state) {
  std::optional<SettingEdit> edit;
  // A setting left at its default shows it greyed.
  if (!value) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  if (shape.kind == SettingKind::kFlag) {
    bool on = value && value->is_boolean() ? value->get<bool>() : default_value == "true";
    if (ImGui::Checkbox("##value", &on)) edit = SettingEdit{rel, on};
  } else if (shape.kind == SettingKind::kChoice) {
    const std::string preview = value ? setting_text(*value) : default_value;
    if (ImGui::BeginCombo("##value", preview.c_str())) {
      if (!value) ImGui::PopStyleColor();  // the list itself is not greyed
      for (const std::string& choice : shape.choices) {
        if (ImGui::Selectable(choice.c_str(), value && value->is_string() && *value == choice))
          edit = SettingEdit{rel, choice};
        items().record_last_item("choice/" + path + "/" + choice);
      }
      if (!value) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
      ImGui::EndCombo();
    }
  } else {
    edit = text_field(path, rel, value, shape, default_value.empty() ? "(none)" : default_value, state);
  }
  if (!value) ImGui::PopStyleColor();
  items().record_last_item("setting/" + path);
  return edit;
}

struct Row {
  std::string path, rel, key, type, default_value, doc;
  SettingShape shape;
};

// One setting: key, widget, reset button, and the validator's problem.
std::optional<SettingEdit> draw_row(const json& section, const Row& row, const SettingsFormInput& input,
                                    SettingsFormState& state) {
  const json* value = find_setting(section, row.rel);
  const std::string problem = input.issues ? issue_about(*input.issues, row.path) : "";
  const float start = ImGui::GetCursorPosX(), width = ImGui::GetContentRegionAvail().x;
  const float key_width = width * 0.45f, reset_width = ImGui::GetFrameHeight();
  ImGui::PushID(row.path.c_str());
  const std::string key = fitted(row.key, key_width - ImGui::GetStyle().ItemSpacing.x);
  const std::string base = input.inherited_from && value ? input.inherited_from(row.path, *value) : "";
  if (!problem.empty())
    ImGui::TextColored(kProblem, "%s", key.c_str());
  else if (!value)
    ImGui::TextDisabled("%s", key.c_str());
  else if (!base.empty())
    ImGui::TextColored(kInherited, "%s", key.c_str());
  else
    ImGui::TextUnformatted(key.c_str());
  if (!base.empty()) items().record_last_item("setting_inherited/" + row.path);
  key_tooltip(row.path, row.type, row.default_value, row.doc, problem, base);
  ImGui::SameLine(start + key_width);
  ImGui::SetNextItemWidth(width - key_width - reset_width - ImGui::GetStyle().ItemSpacing.x);
  if (!problem.empty()) ImGui::PushStyleColor(ImGuiCol_FrameBg, ImVec4(0.45f, 0.12f, 0.1f, 1));
  std::optional<SettingEdit> edit =
      value_widget(row.path, row.rel, value, row.shape, row.default_value, state);
  if (!problem.empty()) ImGui::PopStyleColor();
  if (value) {
    ImGui::SameLine();
    if (ImGui::Button("x", ImVec2(reset_width, 0))) edit = SettingEdit{row.rel, std::nullopt};
    items().record_last_item("setting_reset/" + row.path);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("remove %s: back to the default", row.key.c_str());
  }
  problem_line(row.path, problem);
  ImGui::PopID();
  return edit;
}

// Written keys that no setting documents (nor any group of settings holds),
// as relative paths.
void undocumented_keys(const json& value, const std::string& rel, const std::set<std::string>& documented,
                       std::vector<std::string>& out) {
  if (!value.is_object()) return;
  for (auto& [key, child] : value.items()) {
    const std::string path = rel.empty() ? key : rel + "." + key;
    if (documented.count(path)) continue;
    const bool group = std::any_of(documented.begin(), documented.end(),
                                   [&](const std::string& d) { return d.rfind(path + ".", 0) == 0; });
    if (group && child.is_object())
      undocumented_keys(child, path, documented, out);
    else
      out.push_back(path);
  }
}

}  // namespace

bool any_setting_matches(const core::config::SettingsDoc& settings, const std::string& prefix,
                         const std::string& filter) {
  return std::any_of(settings.settings.begin(), settings.settings.end(), [&](const SettingDoc& s) {
    return s.path.rfind(prefix + ".", 0) == 0 && contains_ignoring_case(s.path, filter);
  });
}

std::string issue_about(const std::vector<core::GraphIssue>& issues, const std::string& path) {
  for (const auto& issue : issues) {
    const std::string& m = issue.message;
    if (m.rfind(path, 0) != 0 || m.size() == path.size()) continue;
    const char next = m[path.size()];
    if (next == ':' || next == ' ' || next == '.') return m;
  }
  return "";
}

std::optional<SettingEdit> draw_settings_form(const json& section, const SettingsFormInput& input,
                                              SettingsFormState& state) {
  std::optional<SettingEdit> edit;
  if (!input.settings) return edit;
  const std::string lead = input.prefix + ".";
  std::set<std::string> documented;
  std::string group = "";
  for (const SettingDoc& doc : input.settings->settings) {
    if (doc.path.rfind(lead, 0) != 0) continue;
    Row row{doc.path, doc.path.substr(lead.size()),         "", doc.type, doc.default_value,
            doc.doc,  core::config::setting_shape(doc.type)};
    documented.insert(row.rel);
    if (input.hidden.count(row.path)) continue;
    if (!input.filter.empty() && !contains_ignoring_case(row.path, input.filter)) continue;
    if (auto named = input.choices.find(row.path); named != input.choices.end()) {
      row.shape.kind = SettingKind::kChoice;
      row.shape.choices = named->second;
    }
    const size_t dot = row.rel.rfind('.');
    row.key = dot == std::string::npos ? row.rel : row.rel.substr(dot + 1);
    const std::string row_group = dot == std::string::npos ? "" : row.rel.substr(0, dot);
    if (row_group != group) {
      group = row_group;
      ImGui::Spacing();
      ImGui::TextDisabled("%s", group.c_str());
    }
    if (auto e = draw_row(section, row, input, state)) edit = e;
  }
  std::vector<std::string> unknown;
  undocumented_keys(section, "", documented, unknown);
  for (const std::string& rel : unknown) {
    const std::string path = lead + rel;
    if (!input.filter.empty() && !contains_ignoring_case(path, input.filter)) continue;
    ImGui::PushID(path.c_str());
    const std::string problem = input.issues ? issue_about(*input.issues, path) : "";
    const json* value = find_setting(section, rel);
    ImGui::TextColored(kProblem, "%s: %s", rel.c_str(), value ? setting_text(*value).c_str() : "");
    key_tooltip(path, "", "", "not a setting here", problem);
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) edit = SettingEdit{rel, std::nullopt};
    items().record_last_item("setting_reset/" + path);
    problem_line(path, problem);
    ImGui::PopID();
  }
  return edit;
}

void apply_setting_edit(json& section, const SettingEdit& edit) {
  if (edit.value)
    set_setting(section, edit.path, *edit.value);
  else
    remove_setting(section, edit.path);
}

}  // namespace rlwb::ui
