// [SECTION] The inspector's forms for everything in the experiment besides
// the nodes: its name and seed, the pools, the models (role, pool, parallel
// layout and every config setting the role reads), the reward modules, the
// task and the trainer. Each form is generated from the settings the parse
// documents (settings_form.h); each edit is one gesture, so one undo step.
// A node's inspector shows its model's or reward's form with the same code.
#include <algorithm>

#include "core/config/setting_types.h"
#include "core/validate/validator.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/graph/experiment_edits.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/setting_values.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {
namespace {

using nlohmann::json;

const std::vector<std::string> kDevices = {"cpu", "cuda"};

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> names;
  for (const auto& [name, value] : map) names.push_back(name);
  return names;
}

// A combo over `choices`; true when the user picked another one. Records
// "choice/<id>/<name>" for each entry, as the forms do.
bool choice_combo(const std::string& id, std::string& value, const std::vector<std::string>& choices) {
  bool picked = false;
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo(("##" + id).c_str(), value.c_str())) {
    for (const auto& choice : choices) {
      if (ImGui::Selectable(choice.c_str(), choice == value) && choice != value)
        value = choice, picked = true;
      items().record_last_item("choice/" + id + "/" + choice);
    }
    ImGui::EndCombo();
  }
  items().record_last_item("field/" + id);
  return picked;
}

void labelled(const char* label) {
  const float start = ImGui::GetCursorPosX(), width = ImGui::GetContentRegionAvail().x;
  ImGui::TextUnformatted(label);
  ImGui::SameLine(start + width * 0.35f);
}

// `change` applied to the experiment as one gesture (one undo step).
template <typename Change>
void as_gesture(GraphDocument& doc, Change change) {
  doc.begin_gesture();
  change(doc.experiment());
  doc.end_gesture();
}

// The edit a form asked for, applied to the section at `section_of(exp)`
// as one gesture.
template <typename SectionOf>
void apply(GraphDocument& doc, const std::optional<SettingEdit>& edit, SectionOf section_of) {
  if (!edit) return;
  as_gesture(doc, [&](core::Experiment& e) { apply_setting_edit(section_of(e), *edit); });
}

// The name field of a pool, model or reward: renames when the user leaves it
// with a name that is free, else says why not. True when it renamed: the
// caller's entry is gone, so it draws nothing more of it this frame.
bool name_field(GraphEditor& ed, const std::string& kind, const std::string& name,
                void (*rename)(core::Experiment&, const std::string&, const std::string&)) {
  // The text typed is kept only while the field is being edited.
  const std::string key = kind + "/" + name;
  auto typing = ed.resource_names.find(key);
  std::string scratch = name;
  std::string& typed = typing != ed.resource_names.end() ? typing->second : scratch;
  labelled("name");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText(("##name_" + key).c_str(), &typed);
  items().record_last_item("field/" + key + "/name");
  const std::string wanted = typed;
  if (ImGui::IsItemActivated()) ed.resource_names[key] = name;
  if (ImGui::IsItemDeactivated()) ed.resource_names.erase(key);
  if (!ImGui::IsItemDeactivatedAfterEdit() || wanted == name) return false;
  const std::string problem = resource_name_problem(ed.doc->experiment(), kind, wanted, name);
  if (!problem.empty()) {
    ed.status = "not renamed: " + problem;
    return false;
  }
  as_gesture(*ed.doc, [&](core::Experiment& e) { rename(e, name, wanted); });
  ed.open_resource = kind + "/" + wanted;
  ed.status = "renamed '" + name + "' to '" + wanted + "'";
  return true;
}

// While filtering, entries and sections are open under ids of their own,
// so that clearing the filter gives back what the user had open.
std::string open_state_id(const GraphEditor& ed, const std::string& id) {
  return ed.settings_filter.empty() ? id : id + "/filtered";
}

bool open_entry(GraphEditor& ed, const std::string& kind, const std::string& name) {
  if (ed.open_resource == kind + "/" + name || !ed.settings_filter.empty()) {
    ImGui::SetNextItemOpen(true);
    if (ed.open_resource == kind + "/" + name) ed.open_resource.clear();
  }
  const bool open = ImGui::TreeNode(open_state_id(ed, kind + "/" + name).c_str(), "%s", name.c_str());
  items().record_last_item("tree/" + kind + "/" + name);
  return open;
}

SettingsFormInput form_input(const GraphEditor& ed, std::string prefix,
                             const core::config::SettingsDoc* doc) {
  SettingsFormInput in;
  in.prefix = std::move(prefix);
  in.settings = doc;
  in.issues = &ed.issues;
  in.filter = ed.settings_filter;
  const GraphDocument* document = ed.doc.get();
  in.inherited_from = [document](const std::string& path, const json& value) {
    return document->setting_origin(path, value);
  };
  return in;
}

void draw_pool(GraphEditor& ed, const std::string& name) {
  GraphDocument& doc = *ed.doc;
  ImGui::PushID(("pool/" + name).c_str());
  if (name_field(ed, "pools", name, rename_pool)) return ImGui::PopID();
  core::PoolSpec& pool = doc.experiment().pools.at(name);
  // An integer field of the pool: edited as one gesture, found by tests
  // under field/pools/<name>/<key>.
  auto int_field = [&](const char* key, int core::PoolSpec::*member) {
    int value = pool.*member;
    labelled(key);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputInt((std::string("##") + key).c_str(), &value, 0))
      doc.begin_gesture(), doc.experiment().pools[name].*member = value;
    items().record_last_item("field/pools/" + name + "/" + key);
  };
  int_field("workers", &core::PoolSpec::workers);
  int_field("threads", &core::PoolSpec::threads);
  std::string device = pool.device;
  labelled("device");
  if (choice_combo("pools/" + name + "/device", device, kDevices)) {
    as_gesture(doc, [&](core::Experiment& e) { e.pools[name].device = device; });
  }
  const std::string problem = issue_about(ed.issues, "pools." + name);
  if (!problem.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", problem.c_str());
  if (recorded_button("Delete pool")) {
    as_gesture(doc, [&](core::Experiment& e) { delete_pool(e, name); });
  }
  ImGui::PopID();
}

void draw_reward_config(GraphEditor& ed, const std::string& name) {
  // A reward type checks its own config (docs/rewards.md lists each
  // type's keys); the form shows what is written, and a field adds a key.
  core::config::SettingsDoc written;
  const std::string prefix = "rewards." + name + ".config";
  const json& config = ed.doc->experiment().rewards.at(name).config;
  if (config.is_object())
    for (auto& [key, value] : config.items())
      written.add({prefix + "." + key, "", "", "see docs/rewards.md for the settings of this type"});
  auto edit = draw_settings_form(config, form_input(ed, prefix, &written), ed.form);
  apply(*ed.doc, edit, [&](core::Experiment& exp) -> json& { return exp.rewards.at(name).config; });
  std::string& adding = ed.resource_names["rewards/" + name + "/new"];
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##new_setting", "add a setting: key: value", &adding);
  items().record_last_item("field/rewards/" + name + "/new_setting");
  if (ImGui::IsItemDeactivatedAfterEdit()) {
    const size_t colon = adding.find(':');
    std::string key = adding.substr(0, colon);
    key.erase(std::remove(key.begin(), key.end(), ' '), key.end());
    if (colon == std::string::npos || key.empty()) {
      ed.status = "write the new setting as key: value";
    } else {
      core::config::SettingShape any;  // a number, a flag, a list or text, as typed
      apply(*ed.doc, SettingEdit{key, setting_value(any, adding.substr(colon + 1))},
            [&](core::Experiment& exp) -> json& { return exp.rewards.at(name).config; });
      adding.clear();
    }
  }
}

}  // namespace

void draw_model_editor(GraphEditor& ed, const std::string& name) {
  GraphDocument& doc = *ed.doc;
  auto catalog = validation_catalog(ed);
  ImGui::PushID(("model/" + name).c_str());
  core::ModelSpec& model = doc.experiment().models.at(name);
  const std::string prefix = "models." + name + ".config";
  const core::config::SettingsDoc settings = core::config::model_settings(model.role, prefix);
  // While filtering, only the settings that match.
  if (!ed.settings_filter.empty()) {
    auto edit = draw_settings_form(model.config, form_input(ed, prefix, &settings), ed.form);
    apply(doc, edit, [&](core::Experiment& exp) -> json& { return exp.models.at(name).config; });
    ImGui::PopID();
    return;
  }
  if (name_field(ed, "models", name, rename_model)) return ImGui::PopID();
  std::string role = model.role, pool = model.pool;
  labelled("role");
  if (choice_combo("models/" + name + "/role", role,
                   catalog ? names_of(catalog->role_methods) : std::vector<std::string>{})) {
    as_gesture(doc, [&](core::Experiment& e) { e.models[name].role = role; });
  }
  labelled("pool");
  if (choice_combo("models/" + name + "/pool", pool, names_of(doc.experiment().pools))) {
    as_gesture(doc, [&](core::Experiment& e) { e.models[name].pool = pool; });
  }
  // One field per size, so each is a click away (a script's too).
  core::ParallelSpec parallel = model.parallel;
  int* sizes[3] = {&parallel.dp, &parallel.tp, &parallel.pp};
  const char* labels[3] = {"dp", "tp", "pp"};
  labelled("dp tp pp");
  const float each = (ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().ItemSpacing.x) / 3;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) ImGui::SameLine();
    ImGui::SetNextItemWidth(each);
    if (ImGui::InputInt((std::string("##") + labels[i]).c_str(), sizes[i], 0))
      doc.begin_gesture(), doc.experiment().models[name].parallel = parallel;
    items().record_last_item("field/models/" + name + "/" + labels[i]);
  }
  if (const std::string problem = issue_about(ed.issues, "models." + name + ".parallel"); !problem.empty())
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", problem.c_str());
  ImGui::TextDisabled("config (what role '%s' reads)", role.c_str());
  auto edit = draw_settings_form(model.config, form_input(ed, prefix, &settings), ed.form);
  apply(doc, edit, [&](core::Experiment& exp) -> json& { return exp.models.at(name).config; });
  ImGui::PopID();
}

void draw_reward_editor(GraphEditor& ed, const std::string& name) {
  GraphDocument& doc = *ed.doc;
  auto catalog = validation_catalog(ed);
  ImGui::PushID(("reward/" + name).c_str());
  if (name_field(ed, "rewards", name, rename_reward)) return ImGui::PopID();
  std::string type = doc.experiment().rewards.at(name).type;
  labelled("type");
  if (choice_combo("rewards/" + name + "/type", type,
                   catalog ? names_of(catalog->reward_methods) : std::vector<std::string>{})) {
    as_gesture(doc, [&](core::Experiment& e) { e.rewards[name].type = type; });
  }
  draw_reward_config(ed, name);
  ImGui::PopID();
}

void draw_phase_inspector(GraphEditor& ed, const std::string& phase) {
  static const core::config::SettingsDoc trainer = core::config::trainer_settings();
  GraphDocument& doc = *ed.doc;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("trainer phase '%s' (Escape: the whole experiment)", phase.c_str());
  ImGui::PopStyleColor();
  const json& written = doc.experiment().trainer;
  const bool map = !written.contains(phase) || written[phase].is_object();
  // A phase that is a map (warm_start, eval, samples) gets the form of its
  // own settings; one that is a single setting (save: [models]) that row.
  SettingsFormInput in = form_input(ed, map ? "trainer." + phase : "trainer", &trainer);
  if (!map) in.filter = "trainer." + phase;
  for (const auto& p : core::trainer_phases()) in.hidden.insert("trainer." + p + ".nodes");
  const json empty = json::object();
  const json& section = map ? (written.contains(phase) ? written[phase] : empty) : written;
  auto edit = draw_settings_form(section, in, ed.form);
  apply(doc, edit, [&](core::Experiment& exp) -> json& { return map ? exp.trainer[phase] : exp.trainer; });
}

void draw_experiment_inspector(GraphEditor& ed) {
  GraphDocument& doc = *ed.doc;
  auto catalog = validation_catalog(ed);
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##settings_filter", "filter settings (e.g. optim.lr)", &ed.settings_filter);
  items().record_last_item("inspector/filter");
  const bool filtering = !ed.settings_filter.empty();
  auto header = [&](const std::string& label, bool open_at_first) {
    if (filtering)
      ImGui::SetNextItemOpen(true);
    else if (open_at_first)
      ImGui::SetNextItemOpen(true, ImGuiCond_Once);
    const bool open = ImGui::CollapsingHeader((label + ("###" + open_state_id(ed, label))).c_str());
    items().record_last_item("section/" + label);
    return open;
  };

  if (!filtering && header("Experiment", true)) {
    core::Experiment& exp = doc.experiment();
    std::string name = exp.name, algorithm = exp.algorithm;
    labelled("name");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##name", &name)) doc.begin_gesture(), exp.name = name;
    items().record_last_item("field/name");
    labelled("algorithm");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##algorithm", &algorithm)) doc.begin_gesture(), exp.algorithm = algorithm;
    items().record_last_item("field/algorithm");
    int seed = static_cast<int>(exp.seed);
    labelled("seed");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputInt("##seed", &seed, 0)) doc.begin_gesture(), exp.seed = seed;
    items().record_last_item("field/seed");
  }
  if (!filtering && header("Pools", false)) {
    for (const std::string& name : names_of(doc.experiment().pools))
      if (open_entry(ed, "pools", name)) draw_pool(ed, name), ImGui::TreePop();
    if (recorded_button("+ pool")) {
      const std::string name = unused_resource_name(doc.experiment(), "pools", "pool");
      as_gesture(doc, [&](core::Experiment& e) { add_pool(e, name, 1, "cpu"); });
      ed.open_resource = "pools/" + name;
    }
  }
  auto model_matches = [&](const std::string& name) {
    const core::ModelSpec& model = doc.experiment().models.at(name);
    const std::string prefix = "models." + name + ".config";
    return any_setting_matches(core::config::model_settings(model.role, prefix), prefix, ed.settings_filter);
  };
  const auto model_names = names_of(doc.experiment().models);
  if ((!filtering || std::any_of(model_names.begin(), model_names.end(), model_matches)) &&
      header("Models", false)) {
    for (const std::string& name : model_names) {
      if (filtering && !model_matches(name)) continue;
      if (!open_entry(ed, "models", name)) continue;
      draw_model_editor(ed, name);
      if (!filtering && recorded_button(("Delete model##" + name).c_str())) {
        as_gesture(doc, [&](core::Experiment& e) { delete_model(e, name); });
      }
      ImGui::TreePop();
    }
    if (!filtering && recorded_button("+ model")) {
      const std::string name = unused_resource_name(doc.experiment(), "models", "model");
      const auto& pools = doc.experiment().pools;
      as_gesture(doc, [&](core::Experiment& e) {
        add_model(e, name, "actor", pools.empty() ? "" : pools.begin()->first);
      });
      ed.open_resource = "models/" + name;
    }
  }
  if (!filtering && header("Rewards", false)) {
    for (const std::string& name : names_of(doc.experiment().rewards)) {
      if (!open_entry(ed, "rewards", name)) continue;
      draw_reward_editor(ed, name);
      if (!filtering && recorded_button(("Delete reward##" + name).c_str())) {
        as_gesture(doc, [&](core::Experiment& e) { delete_reward(e, name); });
      }
      ImGui::TreePop();
    }
    if (!filtering && recorded_button("+ reward")) {
      const std::string name = unused_resource_name(doc.experiment(), "rewards", "reward");
      std::string type =
          catalog && !catalog->reward_methods.empty() ? catalog->reward_methods.begin()->first : "";
      if (catalog && catalog->reward_methods.count("math")) type = "math";
      as_gesture(doc, [&](core::Experiment& e) { add_reward(e, name, type); });
      ed.open_resource = "rewards/" + name;
    }
  }
  static const core::config::SettingsDoc task = core::config::task_settings();
  static const core::config::SettingsDoc trainer = core::config::trainer_settings();
  if ((!filtering || any_setting_matches(task, "task", ed.settings_filter)) && header("Task", false)) {
    const core::config::SettingsDoc& settings = task;
    SettingsFormInput in = form_input(ed, "task", &settings);
    if (catalog) in.choices["task.name"] = names_of(catalog->task_columns);
    auto edit = draw_settings_form(doc.experiment().task, in, ed.form);
    apply(doc, edit, [](core::Experiment& exp) -> json& { return exp.task; });
  }
  if ((!filtering || any_setting_matches(trainer, "trainer", ed.settings_filter)) &&
      header("Trainer", false)) {
    const core::config::SettingsDoc& settings = trainer;
    SettingsFormInput in = form_input(ed, "trainer", &settings);
    // A phase's nodes are on the canvas.
    for (const auto& phase : core::trainer_phases()) in.hidden.insert("trainer." + phase + ".nodes");
    auto edit = draw_settings_form(doc.experiment().trainer, in, ed.form);
    apply(doc, edit, [](core::Experiment& exp) -> json& { return exp.trainer; });
  }
}

}  // namespace rlwb::ui
