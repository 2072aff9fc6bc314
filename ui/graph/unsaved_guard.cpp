// [SECTION] Nothing unsaved is lost: opening another file or quitting with
// unsaved edits asks first (Save, Discard, Cancel).
#include "imgui.h"
#include "ui/graph/graph_editor.h"
#include "ui/platform/item_registry.h"

#include <string>

namespace rlwb::ui {
namespace {

// A dialog button recorded as unsaved/<what> (the toolbar has a Save too).
bool dialog_button(const char* label, const char* what) {
  const bool pressed = ImGui::Button(label);
  items().record_last_item(std::string("unsaved/") + what);
  return pressed;
}

bool unsaved(const GraphEditor& ed) { return ed.doc && ed.doc->loaded() && ed.doc->dirty(); }

void open_now(GraphEditor& ed, const std::string& path, int64_t origin_run) {
  open_graph(ed, path);
  ed.origin_run = origin_run;
}

// Does what waited for the dialog.
void go_on(GraphEditor& ed) {
  if (ed.pending_quit) ed.quit_now = true;
  if (ed.pending_open) open_now(ed, ed.pending_open->first, ed.pending_open->second);
  ed.pending_open.reset();
  ed.pending_quit = false;
}

}  // namespace

void request_open(GraphEditor& ed, const std::string& path, int64_t origin_run) {
  if (!unsaved(ed)) return open_now(ed, path, origin_run);
  ed.pending_open = {path, origin_run};
  ed.pending_quit = false;
}

bool request_quit(GraphEditor& ed) {
  if (!unsaved(ed)) return true;
  ed.pending_quit = true;
  ed.pending_open.reset();
  return false;
}

void draw_unsaved_dialog(GraphEditor& ed) {
  const bool waiting = ed.pending_quit || ed.pending_open.has_value();
  if (waiting && !ImGui::IsPopupOpen("Unsaved changes")) ImGui::OpenPopup("Unsaved changes");
  if (!ImGui::BeginPopupModal("Unsaved changes", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  const ImVec2 at = ImGui::GetWindowPos(), size = ImGui::GetWindowSize();
  items().record("unsaved/dialog", at, ImVec2(at.x + size.x, at.y + size.y));
  ImGui::Text("%s has unsaved changes.", ed.doc ? ed.doc->path().c_str() : "The graph");
  ImGui::TextDisabled("%s", ed.pending_quit
                                ? "Save them before quitting?"
                                : ("Save them before opening " +
                                   (ed.pending_open ? ed.pending_open->first : std::string()) + "?")
                                      .c_str());
  if (dialog_button("Save##unsaved", "save")) {
    try {
      ed.doc->save();
      ed.status = "saved " + ed.doc->path();
      go_on(ed);
    } catch (const std::exception& e) {  // stay: nothing is opened over the unsaved edits
      ed.status = std::string("not saved: ") + e.what();
      ed.pending_open.reset();
      ed.pending_quit = false;
    }
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (dialog_button("Discard##unsaved", "discard")) {
    go_on(ed);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (dialog_button("Cancel##unsaved", "cancel") ||
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    ed.pending_open.reset();
    ed.pending_quit = false;
    ed.status = "kept the unsaved changes";
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace rlwb::ui
