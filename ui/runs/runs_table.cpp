// [SECTION] The runs table: filter, sort, multi-select, rename, tag, delete.
#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/tracking/time_now.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/platform/item_registry.h"
#include "ui/runs/runs_views.h"

namespace rlwb::ui {
namespace {

std::string local_time(double unix_seconds) {
  auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &tm);
  return text;
}

std::string duration(const core::RunInfo& run) {
  double s = (run.end_time > 0 ? run.end_time : core::unix_time_now()) - run.start_time;
  auto total = static_cast<long long>(std::max(0.0, s));
  char text[32];
  if (total < 60)
    std::snprintf(text, sizeof text, "%llds", total);
  else if (total < 3600)
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, total % 3600 / 60);
  return text;
}

std::string tags_text(const RunData& run) {
  std::string out;
  for (const auto& [k, v] : run.tags) out += (out.empty() ? "" : " ") + k + (v.empty() ? "" : "=" + v);
  return out;
}

bool contains_ci(const std::string& text, const std::string& needle) {
  auto it = std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                        [](char a, char b) { return std::tolower(a) == std::tolower(b); });
  return it != text.end();
}

bool matches(const RunData& run, const RunsTableState& state) {
  if (!state.filter.empty()) {
    const auto& i = run.info;
    bool hit = contains_ci(i.name, state.filter) || contains_ci(i.experiment_file, state.filter) ||
               contains_ci(i.algorithm, state.filter) || contains_ci(i.status, state.filter) ||
               contains_ci(tags_text(run), state.filter) || contains_ci(std::to_string(i.id), state.filter);
    if (!hit) return false;
  }
  if (!state.param_filter.empty()) {
    auto eq = state.param_filter.find('=');
    std::string key = state.param_filter.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : state.param_filter.substr(eq + 1);
    bool hit = false;
    for (const auto& [k, v] : run.params)
      if (k == key && (eq == std::string::npos || v.rfind(value, 0) == 0)) hit = true;
    if (!hit) return false;
  }
  return true;
}

ImVec4 status_color(const std::string& status) {
  if (status == "running") return ImVec4(0.4f, 0.75f, 1, 1);
  if (status == "finished") return ImVec4(0.45f, 0.9f, 0.5f, 1);
  if (status == "failed") return ImVec4(1, 0.45f, 0.4f, 1);
  return ImVec4(1, 0.75f, 0.3f, 1);
}

enum Column { kName, kId, kExperiment, kAlgorithm, kStatus, kSteps, kBest, kLast, kStart, kDuration, kTags };

void sort_rows(std::vector<const RunData*>& rows, const ImGuiTableSortSpecs* specs) {
  if (!specs || specs->SpecsCount == 0) return;
  const ImGuiTableColumnSortSpecs& s = specs->Specs[0];
  auto key = [&](const RunData* r) -> std::pair<double, std::string> {
    const auto& i = r->info;
    switch (s.ColumnUserID) {
      case kName:
        return {0, i.name};
      case kId:
        return {static_cast<double>(i.id), ""};
      case kExperiment:
        return {0, i.experiment_file};
      case kAlgorithm:
        return {0, i.algorithm};
      case kStatus:
        return {0, i.status};
      case kSteps:
        return {static_cast<double>(i.last_step), ""};
      case kBest:
        return {r->best_score.value_or(-INFINITY), ""};
      case kLast:
        return {i.last_score.value_or(-INFINITY), ""};
      case kStart:
        return {i.start_time, ""};
      case kDuration:
        return {(i.end_time > 0 ? i.end_time : core::unix_time_now()) - i.start_time, ""};
      default:
        return {0, tags_text(*r)};
    }
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const RunData* a, const RunData* b) {
    auto ka = key(a), kb = key(b);
    return s.SortDirection == ImGuiSortDirection_Ascending ? ka < kb : kb < ka;
  });
}

bool any_running(RunStore& store, const std::set<int64_t>& ids) {
  for (int64_t id : ids)
    if (RunData* r = store.run(id); r && r->info.status == "running") return true;
  return false;
}

void draw_popups(RunStore& store, RunsTableState& state) {
  if (state.open_rename) ImGui::OpenPopup("Rename run"), state.open_rename = false;
  if (state.open_tag) ImGui::OpenPopup("Tag runs"), state.open_tag = false;
  if (state.open_delete) ImGui::OpenPopup("Delete runs?"), state.open_delete = false;
  if (ImGui::BeginPopupModal("Rename run", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    bool enter = ImGui::InputText("name", &state.rename_text, ImGuiInputTextFlags_EnterReturnsTrue);
    items().record_last_item("runs/rename_text");
    if (recorded_button("OK##rename") || enter) {
      std::string error;
      int64_t id = *state.selected.begin();
      state.status = store.rename_run(id, state.rename_text, error) ? "renamed run " + std::to_string(id)
                                                                    : "not renamed: " + error;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (recorded_button("Cancel##rename")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopupModal("Tag runs", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::TextDisabled("key=value sets a tag, -key removes it");
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    bool enter = ImGui::InputText("tag", &state.tag_text, ImGuiInputTextFlags_EnterReturnsTrue);
    items().record_last_item("runs/tag_text");
    if (recorded_button("OK##tag") || enter) {
      std::string error;
      bool ok = true;
      for (int64_t id : state.selected) {
        if (!state.tag_text.empty() && state.tag_text[0] == '-') {
          ok &= store.remove_tag(id, state.tag_text.substr(1), error);
        } else {
          auto eq = state.tag_text.find('=');
          ok &= store.set_tag(id, state.tag_text.substr(0, eq),
                              eq == std::string::npos ? "" : state.tag_text.substr(eq + 1), error);
        }
      }
      state.status =
          ok ? "tagged " + std::to_string(state.selected.size()) + " run(s)" : "not tagged: " + error;
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (recorded_button("Cancel##tag")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  if (ImGui::BeginPopupModal("Delete runs?", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) {
    ImGui::Text("Delete %zu run(s) and all their metrics, events, samples and artifacts records?",
                state.delete_ids.size());
    for (int64_t id : state.delete_ids)
      if (RunData* r = store.run(id)) ImGui::BulletText("%s", run_label(*r).c_str());
    ImGui::TextDisabled("Other runs and files on disk are not touched. This cannot be undone.");
    if (recorded_button("Delete runs")) {
      std::string error;
      state.status = store.delete_runs(state.delete_ids, error)
                         ? "deleted " + std::to_string(state.delete_ids.size()) + " run(s)"
                         : "not deleted: " + error;
      for (int64_t id : state.delete_ids) state.selected.erase(id);
      state.delete_ids.clear();
      ImGui::CloseCurrentPopup();
    }
    ImGui::SameLine();
    if (recorded_button("Cancel##delete")) {
      state.delete_ids.clear();
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace

std::string run_label(const RunData& run) { return "#" + std::to_string(run.info.id) + " " + run.info.name; }

void draw_runs_table(RunStore& store, RunsTableState& state, ViewRequests& requests) {
  ImGui::SetNextItemWidth(260);
  ImGui::InputTextWithHint("##runs_filter", "filter: name, experiment, status, tag", &state.filter);
  items().record_last_item("runs/filter");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  ImGui::InputTextWithHint("##param_filter", "param: key=value", &state.param_filter);
  items().record_last_item("runs/param_filter");
  ImGui::SameLine();
  const size_t n = state.selected.size();
  const bool running = any_running(store, state.selected);
  ImGui::BeginDisabled(n != 1);
  if (recorded_button("Dashboard")) requests.open_dashboard = *state.selected.begin();
  ImGui::SameLine();
  if (recorded_button("Open in editor")) requests.open_in_editor = *state.selected.begin();
  ImGui::EndDisabled();
  // A relaunched run next to the run it came from, with their config diff.
  const RunData* only = n == 1 ? store.run(*state.selected.begin()) : nullptr;
  ImGui::SameLine();
  const bool profiled =
      only && std::find(state.profiled.begin(), state.profiled.end(), only->info.id) != state.profiled.end();
  ImGui::BeginDisabled(!profiled);
  if (recorded_button("Profile")) requests.open_profile = only->info.id;
  ImGui::EndDisabled();
  if (only && !profiled && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("run %lld was not profiled: run it again with profile.enabled=true",
                      static_cast<long long>(only->info.id));
  if (only && only->info.from_run > 0 && store.run(only->info.from_run)) {
    ImGui::SameLine();
    if (recorded_button("Compare with origin")) requests.compare = {only->info.from_run, only->info.id};
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(n < 2);
  if (recorded_button(("Compare (" + std::to_string(n) + ")###compare").c_str()))
    requests.compare.assign(state.selected.begin(), state.selected.end());
  items().record_last_item("button/Compare");
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(n != 1 || running);
  if (recorded_button("Rename")) {
    state.rename_text =
        store.run(*state.selected.begin()) ? store.run(*state.selected.begin())->info.name : "";
    state.open_rename = true;
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(n == 0 || running);
  if (recorded_button("Tag")) state.tag_text.clear(), state.open_tag = true;
  ImGui::SameLine();
  if (recorded_button("Delete")) {
    state.delete_ids.assign(state.selected.begin(), state.selected.end());
    state.open_delete = true;
  }
  ImGui::EndDisabled();
  if (running && n > 0 && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("a running run is not changed from the GUI");
  ImGui::SameLine();
  if (recorded_button("Refresh")) store.refresh();

  std::string error = store.error();
  if (!error.empty()) {
    ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s", error.c_str());
    items().record_last_item("runs/db_error");
  } else
    ImGui::TextDisabled("%s  %s", store.db_path().c_str(), state.status.c_str());
  items().record_last_item("runs/status");

  std::vector<const RunData*> rows;
  for (int64_t id : store.run_ids())
    if (const RunData* r = store.run(id); r && matches(*r, state)) rows.push_back(r);

  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("runs", 11, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch, 2.0f, kName);
    ImGui::TableSetupColumn(
        "id", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending, 0.5f, kId);
    ImGui::TableSetupColumn("experiment", 0, 2.0f, kExperiment);
    ImGui::TableSetupColumn("algorithm", 0, 1.0f, kAlgorithm);
    ImGui::TableSetupColumn("status", 0, 1.0f, kStatus);
    ImGui::TableSetupColumn("steps", 0, 0.6f, kSteps);
    ImGui::TableSetupColumn("best score", 0, 0.9f, kBest);
    ImGui::TableSetupColumn("last score", 0, 0.9f, kLast);
    ImGui::TableSetupColumn("start", 0, 1.4f, kStart);
    ImGui::TableSetupColumn("duration", 0, 0.8f, kDuration);
    ImGui::TableSetupColumn("tags", 0, 1.2f, kTags);
    // The header row, as TableHeadersRow() draws it, with each header recorded
    // for scripts ("runs/header/best score"): a click sorts by that column.
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int column = 0; column < ImGui::TableGetColumnCount(); ++column) {
      if (!ImGui::TableSetColumnIndex(column)) continue;
      const char* name = ImGui::TableGetColumnName(column);
      ImGui::PushID(column);
      ImGui::TableHeader(name);
      ImGui::PopID();
      items().record_last_item(std::string("runs/header/") + name);
    }
    sort_rows(rows, ImGui::TableGetSortSpecs());
    state.visible.clear();
    for (const RunData* r : rows) state.visible.push_back(r->info.id);
    for (const RunData* r : rows) {
      const core::RunInfo& i = r->info;
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      bool selected = state.selected.count(i.id) > 0;
      ImGui::PushID(static_cast<int>(i.id));
      if (ImGui::Selectable(i.name.empty() ? "(unnamed)" : i.name.c_str(), selected,
                            ImGuiSelectableFlags_SpanAllColumns | ImGuiSelectableFlags_AllowDoubleClick)) {
        ImGuiIO& io = ImGui::GetIO();
        if (io.KeyShift && state.anchor) {
          auto a = std::find(state.visible.begin(), state.visible.end(), state.anchor);
          auto b = std::find(state.visible.begin(), state.visible.end(), i.id);
          if (a != state.visible.end() && b != state.visible.end()) {
            if (a > b) std::swap(a, b);
            if (!io.KeyCtrl) state.selected.clear();
            state.selected.insert(a, b + 1);
          }
        } else if (io.KeyCtrl) {
          if (!state.selected.erase(i.id)) state.selected.insert(i.id);
          state.anchor = i.id;
        } else {
          state.selected = {i.id};
          state.anchor = i.id;
        }
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) requests.open_dashboard = i.id;
      }
      items().record_last_item("runs/row/" + std::to_string(i.id));
      ImGui::PopID();
      ImGui::TableSetColumnIndex(kId);
      ImGui::Text("%lld", static_cast<long long>(i.id));
      ImGui::TableSetColumnIndex(kExperiment);
      if (i.from_run > 0) {  // relaunched from another run's experiment; first, as paths get clipped
        ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.5f, 1),
                           "from run %lld:", static_cast<long long>(i.from_run));
        items().record_last_item("runs/from/" + std::to_string(i.id));
        ImGui::SameLine();
      }
      ImGui::TextUnformatted(i.experiment_file.c_str());
      ImGui::TableSetColumnIndex(kAlgorithm);
      ImGui::TextUnformatted(i.algorithm.c_str());
      ImGui::TableSetColumnIndex(kStatus);
      ImGui::TextColored(status_color(i.status), "%s", i.status.c_str());
      ImGui::TableSetColumnIndex(kSteps);
      if (i.last_step >= 0)
        ImGui::Text("%lld", static_cast<long long>(i.last_step));
      else
        ImGui::TextDisabled("-");
      ImGui::TableSetColumnIndex(kBest);
      if (r->best_score)
        ImGui::Text("%.4g", *r->best_score);
      else
        ImGui::TextDisabled("-");
      ImGui::TableSetColumnIndex(kLast);
      if (i.last_score)
        ImGui::Text("%.4g", *i.last_score);
      else
        ImGui::TextDisabled("-");
      ImGui::TableSetColumnIndex(kStart);
      ImGui::TextUnformatted(local_time(i.start_time).c_str());
      ImGui::TableSetColumnIndex(kDuration);
      ImGui::TextUnformatted(duration(i).c_str());
      ImGui::TableSetColumnIndex(kTags);
      ImGui::TextUnformatted(tags_text(*r).c_str());
    }
    ImGui::EndTable();
  }
  draw_popups(store, state);
}

}  // namespace rlwb::ui
