// [SECTION] The graph editor screen around the canvas: toolbar, palette,
// inspector, problems, shortcuts, copy/paste and the palette's contents.
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <filesystem>
#include <sstream>

#include "imgui.h"
#include "core/validate/validator.h"
#include "core/config/experiment_options.h"
#include "imgui_stdlib.h"
#include "ui/graph/auto_layout.h"
#include "ui/graph/editor_text.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/node_pins.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"
#include "ui/graph/plan_panel.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

void draw_canvas(GraphEditor& ed, ImVec2 size);  // graph_canvas.cpp
// experiment_panel.cpp: the forms for the experiment, a model, a reward.
void draw_experiment_inspector(GraphEditor& ed);
void draw_phase_inspector(GraphEditor& ed, const std::string& phase);
void draw_model_editor(GraphEditor& ed, const std::string& model);
void draw_reward_editor(GraphEditor& ed, const std::string& reward);

namespace {

// A node's in/out as the inspector shows them: "a, b" in the list form,
// "port: column" for an entry whose port is named otherwise.
std::string join_bindings(const std::vector<std::string>& columns, const std::vector<std::string>& ports) {
  std::string out;
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& port = i < ports.size() ? ports[i] : columns[i];
    out += (out.empty() ? "" : ", ") + (port == columns[i] ? columns[i] : port + ": " + columns[i]);
  }
  return out;
}

// The inverse: columns, and their ports (empty when every port is named
// like its column, the list form).
void split_bindings(const std::string& text, std::vector<std::string>& columns,
                    std::vector<std::string>& ports) {
  columns.clear();
  ports.clear();
  bool renamed = false;
  auto trim = [](const std::string& s) {
    auto a = s.find_first_not_of(" \t{}"), b = s.find_last_not_of(" \t{}");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  for (const auto& entry : split_list(text)) {
    const auto colon = entry.find(':');
    std::string port = trim(entry.substr(0, colon));
    std::string column = colon == std::string::npos ? port : trim(entry.substr(colon + 1));
    if (column.empty()) continue;
    renamed = renamed || port != column;
    ports.push_back(port);
    columns.push_back(column);
  }
  if (!renamed) ports.clear();
}

// The node a canvas key names: a step node, or a phase's ("eval/eval_gen").
core::NodeSpec* find_node(core::Experiment& exp, const std::string& key) { return find_graph_node(exp, key); }

Vec2 canvas_centre(const GraphEditor& ed) {
  ImVec2 c(ed.canvas_origin.x + ed.canvas_size.x / 2, ed.canvas_origin.y + ed.canvas_size.y / 2);
  ImVec2 w = ed.view.to_world(c, ed.canvas_origin);
  return {std::round(w.x - 95), std::round(w.y - 40)};
}

void prune_selection(GraphEditor& ed) {
  const auto& exp = ed.doc->experiment();
  for (auto it = ed.selected.begin(); it != ed.selected.end();)
    it = find_graph_node(exp, *it) ? std::next(it) : ed.selected.erase(it);
  if (ed.selected_link) {
    auto links = canvas_links(exp);
    if (std::find(links.begin(), links.end(), *ed.selected_link) == links.end()) ed.selected_link.reset();
  }
  ed.inspected.clear();
}

void delete_selection(GraphEditor& ed) {
  GraphDocument& doc = *ed.doc;
  if (!ed.selected.empty()) {
    size_t n = ed.selected.size();
    doc.delete_nodes(ed.selected);
    ed.status = "deleted " + std::to_string(n) + " node(s)";
  } else if (ed.selected_link) {
    const Link link = *ed.selected_link;
    doc.begin_gesture();
    if (core::NodeSpec* node = find_node(doc.experiment(), link.to))
      if (link.to_input < static_cast<int>(node->in.size())) {
        node->in.erase(node->in.begin() + link.to_input);
        if (link.to_input < static_cast<int>(node->in_ports.size()))
          node->in_ports.erase(node->in_ports.begin() + link.to_input);
      }
    doc.end_gesture();
    ed.status = "removed link '" + link.column + "' into " + link.to;
  }
  prune_selection(ed);
}

void do_save(GraphEditor& ed) {
  try {
    ed.doc->save();
    ed.status = "saved " + ed.doc->path();
  } catch (const std::exception& e) {
    ed.status = std::string("not saved: ") + e.what();
  }
}

// Near `at`, a spot where a new node covers no other node (as far as a few
// steps down and right allow).
Vec2 free_spot(const GraphDocument& doc, Vec2 at) {
  const float w = 200, h = 130;  // a new node's box, about
  for (int attempt = 0; attempt < 40; ++attempt) {
    bool clear = true;
    for (const auto& node : doc.experiment().nodes) {
      const Vec2 p = doc.position(node.id), size = node_size(doc.experiment(), node);
      if (at.x < p.x + size.x && at.x + w > p.x && at.y < p.y + size.y && at.y + h > p.y) clear = false;
    }
    if (clear) return at;
    at.y += 40;
    if (attempt % 8 == 7) at.x += 220, at.y -= 320;
  }
  return at;
}

// Adds a node calling `call` at `at` to `phase`'s graph, with the pins its
// callee declares (node_pins.h); `fed_column` feeds its first required input.
std::string add_wired_node(GraphEditor& ed, const std::string& call, Vec2 at,
                           const std::string& fed_column = "", const std::string& phase = "") {
  const core::Experiment& exp = ed.doc->experiment();
  const NodePins pins = pins_for_new_node(phase.empty() ? exp : graph_view(exp, phase),
                                          callee_ports(exp, ed.catalog.get(), call), fed_column);
  return ed.doc->add_node(call, at, pins.in, pins.out, pins.in_ports, pins.out_ports, phase);
}

// Where the palette adds: into the phase last clicked when it takes nodes
// (right of its nodes, inside its frame), else into the step's graph at the
// canvas's centre.
std::pair<std::string, Vec2> palette_target(const GraphEditor& ed) {
  const std::string phase = phase_takes_nodes(ed.inspected_phase) ? ed.inspected_phase : "";
  if (phase.empty()) return {"", free_spot(*ed.doc, canvas_centre(ed))};
  const core::Experiment& exp = ed.doc->experiment();
  if (auto bounds = graph_bounds(exp, ed.doc->positions(), phase))
    return {phase, free_spot(*ed.doc, {bounds->max.x + kLayoutRankGap, bounds->min.y})};
  for (const PhaseGroup& group : phase_groups(exp, ed.doc->positions()))  // its settings box, where nodes go
    if (group.phase == phase)
      return {phase, free_spot(*ed.doc, {group.frame.min.x + kGroupPad, group.frame.min.y + kGroupTitle})};
  return {phase, free_spot(*ed.doc, canvas_centre(ed))};
}

void add_from_palette(GraphEditor& ed, const std::string& call) {
  const auto [phase, at] = palette_target(ed);
  std::string id = add_wired_node(ed, call, at, "", phase);
  ed.selected = {id};
  ed.selected_link.reset();
  ed.status = "added node '" + id + "' (" + call + ")";
}

void handle_shortcuts(GraphEditor& ed) {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || !ed.doc || !ed.doc->loaded()) return;
  GraphDocument& doc = *ed.doc;
  auto pressed = [](int key) { return ImGui::IsKeyPressed(key, false); };
  if (io.KeyCtrl && pressed(GLFW_KEY_Z) && !io.KeyShift) {
    ed.status = doc.undo() ? "undone" : "nothing to undo";
    prune_selection(ed);
  } else if (io.KeyCtrl && (pressed(GLFW_KEY_Y) || (io.KeyShift && pressed(GLFW_KEY_Z)))) {
    ed.status = doc.redo() ? "redone" : "nothing to redo";
    prune_selection(ed);
  } else if (io.KeyCtrl && pressed(GLFW_KEY_C)) {
    if (!ed.selected.empty()) {
      ed.clipboard = copy_nodes(doc, ed.selected);
      ImGui::SetClipboardText(ed.clipboard.c_str());
      ed.status = "copied " + std::to_string(ed.selected.size()) + " node(s)";
    }
  } else if (io.KeyCtrl && pressed(GLFW_KEY_V)) {
    const char* system = ImGui::GetClipboardText();
    std::string text =
        system && std::string(system).find("rlwb_nodes") != std::string::npos ? system : ed.clipboard;
    auto ids = paste_nodes(doc, text, {40, 40});
    if (!ids.empty()) {
      ed.selected = std::set<std::string>(ids.begin(), ids.end());
      ed.status = "pasted " + std::to_string(ids.size()) + " node(s)";
    }
  } else if (io.KeyCtrl && pressed(GLFW_KEY_A)) {
    for (const auto& key : canvas_keys(doc.experiment())) ed.selected.insert(key);
  } else if (io.KeyCtrl && pressed(GLFW_KEY_S)) {
    do_save(ed);
  } else if (!io.KeyCtrl && pressed(GLFW_KEY_F)) {
    ed.frame_requested = true;
  } else if (pressed(GLFW_KEY_DELETE) || pressed(GLFW_KEY_BACKSPACE)) {
    delete_selection(ed);
  } else if (pressed(GLFW_KEY_ESCAPE)) {  // back to the experiment's forms
    ed.selected.clear();
    ed.selected_link.reset();
    ed.inspected_phase.clear();
  }
}

void draw_palette(GraphEditor& ed, float height) {
  ImGui::BeginChild("palette", ImVec2(0, height), true);
  ImGui::TextUnformatted("Palette");
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##filter", "filter", &ed.palette_filter);
  items().record_last_item("palette/filter");
  const bool editable = ed.doc && ed.doc->loaded();
  if (!editable) ImGui::BeginDisabled();
  // Any call, typed: first, so it stays in reach when the catalog's list is long.
  ImGui::SetNextItemWidth(-60);
  ImGui::InputTextWithHint("##custom", "model.method", &ed.custom_call);
  items().record_last_item("palette/custom");
  ImGui::SameLine();
  if (recorded_button("Add##custom") && !ed.custom_call.empty()) add_from_palette(ed, ed.custom_call);
  ImGui::Separator();
  std::string group;
  if (ed.doc)
    for (const PaletteEntry& e : palette_entries(ed.doc->experiment(), ed.catalog.get())) {
      if (!ed.palette_filter.empty() && e.call.find(ed.palette_filter) == std::string::npos) continue;
      if (e.group != group) {
        group = e.group;
        ImGui::TextDisabled("%s", group.c_str());
      }
      if (ImGui::Selectable(("  " + e.call).c_str())) add_from_palette(ed, e.call);
      items().record_last_item("palette/" + e.call);
    }
  if (!editable) ImGui::EndDisabled();
  ImGui::EndChild();
}

void draw_problems(GraphEditor& ed) {
  ImGui::BeginChild("problems", ImVec2(0, 0), true);
  ImGui::TextUnformatted("Problems");
  ImGui::SameLine();
  if (!ed.doc) {
    ImGui::EndChild();
    return;
  }
  if (!ed.doc->loaded()) {
    ImGui::TextColored(ImVec4(1, 0.4f, 0.35f, 1), "file not loaded");
  } else {
    switch (ed.validator.state()) {
      case ValidatorClient::State::checking:
      case ValidatorClient::State::idle:
        ImGui::TextDisabled("checking...");
        break;
      case ValidatorClient::State::done: {
        int errors = 0, warnings = 0;
        for (const auto& i : ed.issues) (i.severity == core::Severity::error ? errors : warnings)++;
        bool stale = ed.issues_version != ed.doc->version();
        if (errors + warnings == 0) {
          ImGui::TextColored(ImVec4(0.4f, 0.9f, 0.5f, 1), stale ? "ok (checking...)" : "ok: ready to run");
          if (!stale) items().record_last_item("problems/ok");
        } else {
          ImGui::TextColored(ImVec4(1, 0.5f, 0.4f, 1), "%d error(s), %d warning(s)%s", errors, warnings,
                             stale ? " (checking...)" : "");
        }
        break;
      }
    }
    if (!ed.catalog) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
      ImGui::TextWrapped(
          "No catalog (--catalog FILE): calls are known if the file made them "
          "when it was opened.");
      ImGui::PopStyleColor();
      items().record_last_item("problems/no_catalog");
    }
  }
  const auto& shown = ed.doc->loaded() ? ed.issues : ed.doc->load_issues();
  for (size_t i = 0; i < shown.size(); ++i) {
    const core::GraphIssue& issue = shown[i];
    ImVec4 color =
        issue.severity == core::Severity::error ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(1, 0.75f, 0.3f, 1);
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    std::string label = (issue.node.empty() ? std::string() : "[" + issue.node + "] ") +
                        (issue.phase.empty() ? std::string() : "trainer." + issue.phase + ": ") +
                        issue.message;
    // After an edit the lines are those of the text Save would write, not
    // of the file on disk: the node and the message say where instead.
    if (issue.line > 0 && !ed.doc->dirty()) label = "line " + std::to_string(issue.line) + ": " + label;
    ImGui::PushID(static_cast<int>(i));
    bool clicked = ImGui::Selectable(label.c_str(), false, 0);
    ImGui::PopID();
    ImGui::PopStyleColor();
    items().record_last_item("problem/" + std::to_string(i));
    // The row is cut at the panel's width: the tooltip has all of it.
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s%s%s", label.c_str(), issue.hint.empty() ? "" : "\nhint: ", issue.hint.c_str());
    if (clicked && !issue.node.empty()) {
      ed.selected = {canvas_key(issue.phase, issue.node)};
      ed.selected_link.reset();
      Vec2 p = ed.doc->position(canvas_key(issue.phase, issue.node));
      ed.view.offset = {ed.canvas_size.x / (2 * ed.view.zoom) - (p.x + 95),
                        ed.canvas_size.y / (2 * ed.view.zoom) - (p.y + 50)};
    }
  }
  ImGui::EndChild();
}

// A text field applied when the user leaves it (Enter or click away).
bool edited_field(const char* label, std::string* buffer, const char* record_id = nullptr) {
  ImGui::SetNextItemWidth(-1);
  ImGui::InputText(label, buffer);
  if (record_id) items().record_last_item(record_id);
  return ImGui::IsItemDeactivatedAfterEdit();
}

void draw_node_inspector(GraphEditor& ed, const std::string& id) {
  GraphDocument& doc = *ed.doc;
  core::NodeSpec* node = find_node(doc.experiment(), id);
  if (!node) return;
  if (ed.inspected != id || (ed.inspected_version != doc.version() && !ImGui::IsAnyItemActive())) {
    ed.inspected = id;
    ed.inspected_version = doc.version();
    ed.edit_id = node->id;
    ed.edit_call = node->call;
    ed.edit_in = join_bindings(node->in, node->in_ports);
    ed.edit_out = join_bindings(node->out, node->out_ports);
    ed.edit_args = node->args.empty() ? "" : node->args.dump();
  }
  ImGui::TextDisabled("node");
  ImGui::TextUnformatted("id");
  if (edited_field("##id", &ed.edit_id, "inspector/id")) {
    std::string error;
    if (doc.rename_node(id, ed.edit_id, error)) {
      ed.selected = {canvas_key(split_canvas_key(id).phase, ed.edit_id)};
      ed.status = "renamed node '" + id + "' to '" + ed.edit_id + "'";
    } else {
      ed.status = "not renamed: " + error;
    }
    return;
  }
  ImGui::TextUnformatted("call");
  if (edited_field("##call", &ed.edit_call, "inspector/call")) {
    doc.begin_gesture();
    set_node_call(*find_node(doc.experiment(), id), ed.edit_call);
    doc.end_gesture();
  }
  ImGui::TextUnformatted("in (columns read; port: column to bind another)");
  if (edited_field("##in", &ed.edit_in, "inspector/in")) {
    doc.begin_gesture();
    core::NodeSpec* edited = find_node(doc.experiment(), id);
    split_bindings(ed.edit_in, edited->in, edited->in_ports);
    doc.end_gesture();
  }
  ImGui::TextUnformatted("out (columns written; port: column)");
  if (edited_field("##out", &ed.edit_out, "inspector/out")) {
    doc.begin_gesture();
    core::NodeSpec* edited = find_node(doc.experiment(), id);
    split_bindings(ed.edit_out, edited->out, edited->out_ports);
    doc.end_gesture();
  }
  ImGui::TextUnformatted("args (JSON: options of this call, e.g. {\"greedy\": true})");
  if (edited_field("##args", &ed.edit_args, "inspector/args")) {
    nlohmann::json args =
        ed.edit_args.empty() ? nlohmann::json::object() : nlohmann::json::parse(ed.edit_args, nullptr, false);
    if (!args.is_object()) {
      ed.status = "args not applied: write a JSON map, e.g. {\"greedy\": true}";
    } else {
      doc.begin_gesture();
      find_node(doc.experiment(), id)->args = args;
      doc.end_gesture();
    }
  }
  node = find_node(doc.experiment(), id);
  if (doc.experiment().models.count(node->target)) {
    ImGui::Separator();
    ImGui::TextDisabled("model '%s' (shared by every node calling it)", node->target.c_str());
    draw_model_editor(ed, node->target);
  } else if (doc.experiment().rewards.count(node->target)) {
    ImGui::Separator();
    ImGui::TextDisabled("reward module '%s'", node->target.c_str());
    draw_reward_editor(ed, node->target);
  }
  ImGui::Separator();
  for (const auto& issue : ed.issues)
    if (canvas_key(issue.phase, issue.node) == id) {
      ImGui::PushStyleColor(ImGuiCol_Text, issue.severity == core::Severity::error
                                               ? ImVec4(1, 0.45f, 0.4f, 1)
                                               : ImVec4(1, 0.75f, 0.3f, 1));
      ImGui::TextWrapped("%s", issue.message.c_str());
      ImGui::PopStyleColor();
      if (!issue.hint.empty()) ImGui::TextWrapped("hint: %s", issue.hint.c_str());
    }
  if (recorded_button("Delete node")) delete_selection(ed);
}

void draw_inspector(GraphEditor& ed) {
  ImGui::BeginChild("inspector", ImVec2(0, 0), true);
  ImGui::TextUnformatted("Inspector");
  ImGui::Separator();
  if (!ed.doc || !ed.doc->loaded()) {
    ImGui::TextDisabled("no graph loaded");
  } else if (ed.selected.size() == 1) {
    draw_node_inspector(ed, *ed.selected.begin());
  } else if (ed.selected.size() > 1) {
    ImGui::Text("%zu nodes selected", ed.selected.size());
    if (recorded_button("Delete nodes")) delete_selection(ed);
  } else if (ed.selected_link) {
    const Link& l = *ed.selected_link;
    ImGui::TextDisabled("link");
    ImGui::Text("column '%s'", l.column.c_str());
    ImGui::Text("from %s", l.from == kTaskNode ? "the task" : l.from.c_str());
    ImGui::Text("into %s (input %d)", l.to.c_str(), l.to_input);
    if (recorded_button("Delete link")) delete_selection(ed);
  } else if (!ed.inspected_phase.empty()) {
    draw_phase_inspector(ed, ed.inspected_phase);
  } else {
    draw_experiment_inspector(ed);
  }
  ImGui::EndChild();
}

void draw_popups(GraphEditor& ed) {
  if (ed.open_prewire) {
    ImGui::OpenPopup("prewire");
    ed.open_prewire = false;
  }
  if (ed.open_context) {
    ImGui::OpenPopup("canvas_menu");
    ed.open_context = false;
  }
  if (ImGui::BeginPopup("prewire")) {
    ImGui::TextDisabled("new node reading '%s'", ed.prewire_column.c_str());
    for (const PaletteEntry& e : palette_entries(ed.doc->experiment(), ed.catalog.get())) {
      if (ImGui::Selectable(e.call.c_str())) {
        std::string id = add_wired_node(ed, e.call, ed.prewire_at, ed.prewire_column, ed.prewire_phase);
        ed.selected = {id};
        ed.status = "added node '" + id + "' reading '" + ed.prewire_column + "'";
      }
      items().record_last_item("prewire/" + e.call);
    }
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopup("canvas_menu")) {
    if (ImGui::BeginMenu("Add node")) {
      for (const PaletteEntry& e : palette_entries(ed.doc->experiment(), ed.catalog.get()))
        if (ImGui::MenuItem(e.call.c_str())) add_from_palette(ed, e.call);
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Frame all", "F")) ed.frame_requested = true;
    if (ImGui::MenuItem("Delete selection", "Del", false, !ed.selected.empty() || ed.selected_link))
      delete_selection(ed);
    if (ImGui::MenuItem("Undo", "Ctrl+Z", false, ed.doc->can_undo())) ed.doc->undo(), prune_selection(ed);
    if (ImGui::MenuItem("Redo", "Ctrl+Y", false, ed.doc->can_redo())) ed.doc->redo(), prune_selection(ed);
    ImGui::EndPopup();
  }
}

// New...: a copy of a template, beside the open file (else in the current
// folder), named <template>-new.yaml (-2, -3, ... when taken), opened. A
// template built on another is written resolved, so the copy stands alone.
// Writes `text` as <stem>-new.yaml (-2, -3, ... when taken) beside the open
// file (else in the current folder) and opens it; returns the path.
std::string write_new_document(GraphEditor& ed, const std::string& stem, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path dir = ed.doc ? fs::path(ed.doc->path()).parent_path() : fs::current_path();
  fs::path target = dir / (stem + "-new.yaml");
  for (int i = 2; fs::exists(target); ++i) target = dir / (stem + "-new-" + std::to_string(i) + ".yaml");
  std::ofstream out(target, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + target.string() + " (is the folder writable?)");
  request_open(ed, target.string());
  return target.string();
}

void new_from_template(GraphEditor& ed, const std::filesystem::path& source) {
  try {
    const core::Experiment exp = core::load_experiment_file(source.string());
    const std::string target = write_new_document(ed, source.stem().string(), exp.text);
    ed.status = "new experiment " + target + " from the template " + source.filename().string();
  } catch (const std::exception& e) {
    ed.status = "template " + source.string() + " not used: " + e.what();
  }
}

// An empty canvas: a file with only a name, built up in the inspector.
void new_empty(GraphEditor& ed) {
  try {
    const std::string target = write_new_document(ed, "untitled", "name: untitled\n");
    ed.status = "new empty experiment " + target;
  } catch (const std::exception& e) {
    ed.status = std::string("no new experiment: ") + e.what();
  }
}

void draw_template_menu(GraphEditor& ed) {
  namespace fs = std::filesystem;
  if (recorded_button("New...")) ImGui::OpenPopup("templates");
  if (!ImGui::BeginPopup("templates")) return;
  std::vector<fs::path> templates;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ed.templates_dir, ec))
    if (e.path().extension() == ".yaml") templates.push_back(e.path());
  std::sort(templates.begin(), templates.end());
  if (ImGui::Selectable("(empty)")) new_empty(ed);
  items().record_last_item("template/(empty)");
  ImGui::Separator();
  if (templates.empty()) ImGui::TextDisabled("no *.yaml in %s", ed.templates_dir.c_str());
  for (const auto& t : templates) {
    if (ImGui::Selectable(t.stem().string().c_str())) new_from_template(ed, t);
    items().record_last_item("template/" + t.stem().string());
  }
  ImGui::EndPopup();
}

void draw_toolbar(GraphEditor& ed) {
  ImGui::SetNextItemWidth(360);
  bool enter = ImGui::InputTextWithHint("##open_path", "experiments/demo.yaml", &ed.open_path,
                                        ImGuiInputTextFlags_EnterReturnsTrue);
  items().record_last_item("editor/path");
  ImGui::SameLine();
  if (recorded_button("Open") || enter) request_open(ed, ed.open_path);
  ImGui::SameLine();
  draw_template_menu(ed);
  const bool loaded = ed.doc && ed.doc->loaded();
  ImGui::SameLine();
  if (!loaded) ImGui::BeginDisabled();
  if (recorded_button("Save")) do_save(ed);
  ImGui::SameLine();
  if (recorded_button("Undo")) ed.doc->undo(), prune_selection(ed);
  ImGui::SameLine();
  if (recorded_button("Redo")) ed.doc->redo(), prune_selection(ed);
  ImGui::SameLine();
  if (recorded_button("Frame all")) ed.frame_requested = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(180);
  if (ImGui::InputTextWithHint("##search", "find node or column", &ed.search,
                               ImGuiInputTextFlags_EnterReturnsTrue)) {
    const auto hits = search_nodes(ed.doc->experiment(), ed.search);
    if (hits.empty()) {
      ed.status = "no node or column matches '" + ed.search + "'";
    } else {
      const std::string& hit = hits[ed.search_next++ % hits.size()];
      ed.selected = {hit};
      ed.centre_on = hit;
      ed.status =
          "'" + ed.search + "': " + hit + " (" + std::to_string(hits.size()) + " match(es); Enter: next)";
    }
    ImGui::SetKeyboardFocusHere(-1);  // stay in the field for the next Enter
  }
  items().record_last_item("editor/search");
  if (ImGui::IsItemEdited()) ed.search_next = 0;
  ImGui::SameLine();
  if (recorded_button("Auto-layout")) {
    ed.status = ed.doc->arrange() ? "laid out by Graphviz (undo puts the nodes back)" : "already laid out";
    ed.frame_requested = true;
  }
  ImGui::SameLine();
  if (recorded_button("Plan...")) open_plan_panel(ed);
  ImGui::SameLine();
  if (recorded_button("Run...")) ed.wants_run = true;
  if (!loaded) ImGui::EndDisabled();
  if (ed.doc) {
    ImGui::SameLine();
    const std::string origin =
        ed.origin_run ? "  (the experiment of run " + std::to_string(ed.origin_run) + ")" : "";
    ImGui::TextDisabled("%s%s%s", ed.doc->path().c_str(), origin.c_str(),
                        ed.doc->dirty() ? "  (unsaved changes)" : "");
    items().record_last_item("editor/file");
  }
  ImGui::TextDisabled("%s", ed.status.empty() ? " " : ed.status.c_str());
  items().record_last_item("editor/status");
}

void update_validation(GraphEditor& ed) {
  if (!ed.doc || !ed.doc->loaded()) return;
  if (ed.yaml_cache_version != ed.doc->version() && !ed.doc->in_gesture()) {
    ed.yaml_cache = ed.doc->text_to_save();
    ed.yaml_cache_version = ed.doc->version();
  }
  if (ed.yaml_cache_version == 0) return;
  ed.validator.update(ed.yaml_cache_version, ed.yaml_cache, ed.doc->path());
  if (ed.validator.state() == ValidatorClient::State::done &&
      ed.validator.checked_version() != ed.issues_version) {
    ed.issues = ed.validator.issues();
    ed.issues_version = ed.validator.checked_version();
  }
}

}  // namespace

std::vector<std::string> search_nodes(const core::Experiment& exp, const std::string& text) {
  if (text.empty()) return {};
  auto has = [&](const std::string& s) { return contains_ignoring_case(s, text); };
  std::vector<std::string> hits;
  for (const auto& node : exp.nodes) {
    bool hit = has(node.id) || has(node.call);
    for (const auto* names : {&node.in, &node.out, &node.in_ports, &node.out_ports})
      for (const auto& name : *names) hit = hit || has(name);
    if (hit) hits.push_back(node.id);
  }
  return hits;
}

std::vector<PaletteEntry> palette_entries(const core::Experiment& exp, const core::MethodCatalog* catalog) {
  std::vector<PaletteEntry> out;
  const core::MethodCatalog used = catalog_from_calls(exp);  // what the file already calls
  auto names = [](const core::MethodPorts& methods) {
    std::vector<std::string> out;
    for (const auto& [name, ports] : methods) out.push_back(name);
    return out;
  };
  auto methods_of = [&](const std::map<std::string, core::MethodPorts>* known,
                        const std::map<std::string, core::MethodPorts>& called, const std::string& key) {
    if (known)
      if (auto it = known->find(key); it != known->end()) return names(it->second);
    auto it = called.find(key);
    return it == called.end() ? std::vector<std::string>{} : names(it->second);
  };
  for (const auto& [name, model] : exp.models)
    for (const auto& method :
         methods_of(catalog ? &catalog->role_methods : nullptr, used.role_methods, model.role))
      if (!method.empty()) out.push_back({name + "." + method, "models"});
  for (const auto& [name, reward] : exp.rewards)
    for (const auto& method :
         methods_of(catalog ? &catalog->reward_methods : nullptr, used.reward_methods, reward.type))
      if (!method.empty()) out.push_back({name + "." + method, "rewards"});
  for (const auto& b : names(catalog && !catalog->builtins.empty() ? catalog->builtins : used.builtins))
    if (!b.empty()) out.push_back({"builtin." + b, "builtins"});
  return out;
}

nlohmann::json node_json(const GraphDocument& doc, const core::NodeSpec& node, const std::string& phase) {
  const Vec2 p = doc.position(canvas_key(phase, node.id));
  return {
      {"id", node.id}, {"phase", phase},  {"key", canvas_key(phase, node.id)}, {"call", node.call},
      {"in", node.in}, {"out", node.out}, {"in_ports", node.in_ports},         {"out_ports", node.out_ports},
      {"x", p.x},      {"y", p.y}};
}

std::string copy_nodes(const GraphDocument& doc, const std::set<std::string>& keys) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& phase : graphs_with_nodes(doc.experiment()))
    for (const auto& node : graph_nodes(doc.experiment(), phase))
      if (keys.count(canvas_key(phase, node.id))) nodes.push_back(node_json(doc, node, phase));
  return nlohmann::json{{"rlwb_nodes", nodes}}.dump();
}

std::vector<std::string> paste_nodes(GraphDocument& doc, const std::string& text, Vec2 offset) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("rlwb_nodes") || !j["rlwb_nodes"].is_array())
    return {};
  // Each node goes back into the graph it was copied from (the step's, or
  // a phase's); columns are renamed within that graph.
  std::map<std::string, std::set<std::string>> columns_taken;         // phase -> columns in use
  std::map<std::string, std::map<std::string, std::string>> renamed;  // phase -> old output -> new name
  std::vector<std::string> keys;
  doc.begin_gesture();
  for (const auto& item : j["rlwb_nodes"]) {
    const std::string phase =
        phase_takes_nodes(item.value("phase", std::string())) ? item.value("phase", std::string()) : "";
    if (!columns_taken.count(phase))
      columns_taken[phase] =
          columns_in_use(phase.empty() ? doc.experiment() : graph_view(doc.experiment(), phase));
    core::NodeSpec node;
    set_node_call(node, item.value("call", std::string()));
    node.id = doc.unique_node_id(item.value("id", std::string("node")), phase);
    node.in = item.value("in", std::vector<std::string>{});
    node.in_ports = item.value("in_ports", std::vector<std::string>{});
    const auto out = item.value("out", std::vector<std::string>{});
    // A renamed output keeps its port: the copy's ports are the original's.
    std::vector<std::string> out_ports = item.value("out_ports", std::vector<std::string>{});
    if (out_ports.size() != out.size()) out_ports = out;
    for (const auto& c : out) {
      const std::string name = fresh_column(c, columns_taken[phase]);
      renamed[phase][c] = name;
      node.out.push_back(name);
    }
    node.out_ports = out_ports == node.out ? std::vector<std::string>{} : out_ports;
    edit_graph(doc.experiment(), phase, [&](core::Experiment& graph) { graph.nodes.push_back(node); });
    doc.set_position(canvas_key(phase, node.id), {std::round(item.value("x", 0.0f) + offset.x),
                                                  std::round(item.value("y", 0.0f) + offset.y)});
    keys.push_back(canvas_key(phase, node.id));
  }
  // Inputs fed by a pasted node follow its renamed output, on the same port.
  for (const auto& key : keys) {
    core::NodeSpec& node = *find_graph_node(doc.experiment(), key);
    const auto& names = renamed[split_canvas_key(key).phase];
    std::vector<std::string> ports;
    for (size_t i = 0; i < node.in.size(); ++i) ports.push_back(node.in_port(i));
    for (auto& c : node.in)
      if (auto it = names.find(c); it != names.end()) c = it->second;
    node.in_ports = ports == node.in ? std::vector<std::string>{} : ports;
  }
  doc.end_gesture();
  return keys;
}

std::shared_ptr<const core::MethodCatalog> validation_catalog(const GraphEditor& ed) {
  if (ed.catalog) return ed.catalog;
  if (!ed.doc || !ed.doc->loaded()) return nullptr;
  return std::make_shared<const core::MethodCatalog>(catalog_from_calls(ed.doc->experiment()));
}

void open_graph(GraphEditor& ed, const std::string& path) {
  ed.doc = std::make_unique<GraphDocument>(GraphDocument::open(path));
  ed.open_path = path;
  ed.selected.clear();
  ed.selected_link.reset();
  ed.frame_requested = true;
  ed.issues.clear();
  ed.issues_version = 0;
  ed.yaml_cache_version = 0;
  ed.validator.reset(validation_catalog(ed));
  ed.inspected.clear();
  // Plans belong to the experiment they were searched for; the request stays.
  PlanSession fresh;
  fresh.request = ed.plan.request;
  ed.plan = std::move(fresh);
  ed.status = ed.doc->loaded()
                  ? "opened " + path
                  : "could not load " + path + " (" + std::to_string(ed.doc->load_issues().size()) +
                        " problem(s)); it is shown read-only and will not be overwritten";
}

void draw_graph_editor(GraphEditor& ed) {
  draw_toolbar(ed);
  if (!ed.doc) {
    ImGui::TextDisabled("Open an experiment file (experiments/*.yaml) to edit its graph.");
    return;
  }
  update_validation(ed);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float left = 250, right = 300;
  ImGui::BeginChild("left", ImVec2(left, avail.y), false);
  draw_palette(ed, avail.y * 0.55f);
  draw_problems(ed);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("canvas_area",
                    ImVec2(avail.x - left - right - 2 * ImGui::GetStyle().ItemSpacing.x, avail.y), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  ed.canvas_origin = ImGui::GetCursorScreenPos();
  ed.canvas_size = ImGui::GetContentRegionAvail();
  if (ed.doc->loaded()) {
    draw_canvas(ed, ed.canvas_size);
  } else {
    ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s could not be loaded:", ed.doc->path().c_str());
    items().record_last_item("load_error");
    for (const auto& issue : ed.doc->load_issues()) ImGui::TextWrapped("%s", issue.to_string().c_str());
    ImGui::Spacing();
    ImGui::TextWrapped("The file is left as it is: fix it in a text editor and open it again.");
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("right", ImVec2(right, avail.y), false);
  draw_inspector(ed);
  ImGui::EndChild();
  if (ed.doc->loaded()) {
    draw_popups(ed);
    draw_plan_panel(ed);
    if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)) handle_shortcuts(ed);
    // Field edits (numbers, text typed into the inspector) end their gesture
    // when no widget is active any more: one undo entry per field edit.
    if (ed.doc->in_gesture() && ed.drag != GraphEditor::Drag::move && !ImGui::IsAnyItemActive())
      ed.doc->end_gesture();
  }
}

}  // namespace rlwb::ui
