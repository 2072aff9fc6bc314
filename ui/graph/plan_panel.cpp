// [SECTION] The Plan panel: request row, ranked plans, the selected plan's
// sets and per-node breakdown, Apply. Reads top to bottom like the window.
#include "ui/graph/plan_panel.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "core/planner/plan_report.h"
#include "core/planner/plan_writer.h"
#include "imgui.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {
namespace {

namespace planner = core::planner;

const ImVec4 kErrorText(1, 0.45f, 0.4f, 1);
const ImVec4 kWarningText(1, 0.75f, 0.3f, 1);

// A labelled whole-number field; the label is drawn apart so that the
// recorded rect is the field a person clicks into.
void number_field(const char* label, const char* id, const char* item, int& value, float width,
                  const char* tip) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(width);
  ImGui::InputInt(id, &value, 0, 0);
  items().record_last_item(item);
  ImGui::SameLine(0, 18);
}

void draw_request(GraphEditor& ed) {
  PlanSession& s = ed.plan;
  PlanRequest& r = s.request;
  number_field("Devices", "##plan_devices", "plan/devices", r.devices, 70,
               "GPUs (or CPU worker processes for this host's profile) to place the models on");
  number_field("Nodes", "##plan_nodes", "plan/nodes", r.nodes, 50,
               "machines the devices are spread over; 0: the profile's devices per node");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Device profile");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("##plan_profile", r.profile.c_str())) {
    for (const std::string& name : plan_profile_choices()) {
      if (ImGui::Selectable(name.c_str(), name == r.profile)) r.profile = name;
      items().record_last_item("plan/profile/" + name);
    }
    ImGui::EndCombo();
  }
  items().record_last_item("plan/profile");
  ImGui::SameLine(0, 18);
  number_field("Max pp", "##plan_max_pp", "plan/max_pp", r.max_pp, 40,
               "largest pipeline-parallel size; the workers run pp 1 until pipeline parallelism is built");
  if (recorded_button("Search")) {
    const auto catalog = validation_catalog(ed);
    search_plans_for(s, *ed.doc, catalog ? *catalog : core::MethodCatalog{}, ed.tokenizer_vocab);
    // The status line is one line: the panel shows the whole message.
    ed.status = s.error.empty() ? std::to_string(s.search.plans.size()) + " plan(s) for " +
                                      std::to_string(s.devices) + " " + s.profile + " device(s)"
                                : "no plan: " + s.error.substr(0, s.error.find('\n'));
  }
}

// The names of a plan's pools in name order, as the canvas colours them once applied.
std::vector<std::string> pool_names(const planner::PlanInput& input, const planner::Plan& plan) {
  std::vector<std::string> names;
  for (const auto& set : plan.sets) names.push_back(planner::pool_name_of(input, set));
  std::sort(names.begin(), names.end());
  return names;
}

ImU32 set_color(const std::vector<std::string>& sorted_pools, const std::string& pool) {
  return pool_color(std::lower_bound(sorted_pools.begin(), sorted_pools.end(), pool) - sorted_pools.begin());
}

void colored_chip(ImU32 color) {
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::GetWindowDrawList()->AddRectFilled(at, ImVec2(at.x + h * 0.8f, at.y + h), color, 2);
  ImGui::Dummy(ImVec2(h * 0.8f, h));
  ImGui::SameLine();
}

std::string layouts_text(const planner::PlanInput& input, const planner::Plan& plan) {
  std::string out;
  for (size_t m = 0; m < input.models.size(); ++m)
    out += (out.empty() ? "" : ", ") + input.models[m].name + " " +
           planner::layout_text(input.models[m], plan.layouts[m]);
  return out;
}

std::string memory_text(const planner::Plan& plan) {
  std::string out;
  for (const auto& set : plan.sets)
    out += (out.empty() ? "" : " / ") + planner::bytes_text(set.memory_per_device);
  return out;
}

void draw_plan_list(PlanSession& s) {
  const auto& plans = s.search.plans;
  const float rows = static_cast<float>(std::min<size_t>(plans.size(), 8));
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_BordersOuterH | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_SizingStretchProp;
  const float height = ImGui::GetTextLineHeightWithSpacing() * (rows + 1.6f);
  if (!ImGui::BeginTable("plans", 6, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, 28);
  ImGui::TableSetupColumn("step", ImGuiTableColumnFlags_WidthFixed, 70);
  ImGui::TableSetupColumn("tokens/s", ImGuiTableColumnFlags_WidthFixed, 70);
  ImGui::TableSetupColumn("device sets: models x devices", ImGuiTableColumnFlags_WidthStretch, 2.2f);
  ImGui::TableSetupColumn("layouts", ImGuiTableColumnFlags_WidthStretch, 3);
  ImGui::TableSetupColumn("memory / device", ImGuiTableColumnFlags_WidthStretch, 1.6f);
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < plans.size(); ++i) {
    const planner::Plan& plan = plans[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string rank = std::to_string(i + 1);
    if (ImGui::Selectable(rank.c_str(), s.selected == static_cast<int>(i),
                          ImGuiSelectableFlags_SpanAllColumns))
      s.selected = static_cast<int>(i);
    items().record_last_item("plan/row/" + rank);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(planner::seconds_text(plan.step.seconds).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.0f", plan.tokens_per_second);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(planner::placement_summary(s.input, plan).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(layouts_text(s.input, plan).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(memory_text(plan).c_str());
  }
  ImGui::EndTable();
}

// A table of the selected plan's details: (header, width weight) columns.
bool begin_breakdown_table(const char* id, std::initializer_list<std::pair<const char*, float>> columns) {
  const ImGuiTableFlags flags =
      ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp;
  if (!ImGui::BeginTable(id, static_cast<int>(columns.size()), flags)) return false;
  for (const auto& [header, weight] : columns)
    ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthStretch, weight);
  ImGui::TableHeadersRow();
  return true;
}

// Each device set: its pool, devices, memory per device; each model's
// layout and memory.
void draw_sets(const PlanSession& s, const planner::Plan& plan) {
  const auto pools = pool_names(s.input, plan);
  if (!begin_breakdown_table("sets", {{"pool (device set)", 1.2f},
                                      {"devices", 1},
                                      {"memory / device", 1},
                                      {"model", 1},
                                      {"layout", 1},
                                      {"model's memory", 1.6f}}))
    return;
  for (const planner::DeviceSet& set : plan.sets) {
    const std::string pool = planner::pool_name_of(s.input, set);
    bool first = true;
    for (int m : set.models) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (first) {
        colored_chip(set_color(pools, pool));
        ImGui::TextUnformatted(pool.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%d (%d-%d)", set.devices, set.first_device, set.first_device + set.devices - 1);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(planner::bytes_text(set.memory_per_device).c_str());
      } else {
        ImGui::TableNextColumn();
        ImGui::TableNextColumn();
      }
      first = false;
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s.input.models[m].name.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(planner::layout_text(s.input.models[m], plan.layouts[m]).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%s kept + %s peak", planner::bytes_text(plan.memory[m].resident).c_str(),
                  planner::bytes_text(plan.memory[m].transient).c_str());
    }
  }
  ImGui::EndTable();
}

// The simulated step, node by node: where each ran, when, for how long and
// on what, with a bar on the step's time axis (colour: its device set).
void draw_stages(const PlanSession& s, const planner::Plan& plan) {
  const auto pools = pool_names(s.input, plan);
  if (!begin_breakdown_table("stages", {{"node", 1},
                                        {"pool", 1},
                                        {"start", 1},
                                        {"time", 1},
                                        {"compute", 1},
                                        {"comm", 1},
                                        {"overhead", 1},
                                        {"on the step's timeline", 3}}))
    return;
  const double step = std::max(plan.step.seconds, 1e-12);
  for (const planner::StageEstimate& e : plan.step.stages) {
    const std::string pool = e.set < 0 ? "controller" : planner::pool_name_of(s.input, plan.sets[e.set]);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(e.node.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(pool.c_str());
    for (double value : {e.start, e.seconds, e.time.compute, e.time.communication, e.time.overhead}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(planner::seconds_text(value).c_str());
    }
    ImGui::TableNextColumn();
    const float width = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float x0 = at.x + width * static_cast<float>(e.start / step);
    const float x1 = std::max(x0 + 2, at.x + width * static_cast<float>((e.start + e.seconds) / step));
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRectFilled(ImVec2(at.x, at.y + h * 0.45f), ImVec2(at.x + width, at.y + h * 0.55f),
                        IM_COL32(90, 90, 100, 255));
    draw->AddRectFilled(ImVec2(x0, at.y + 1), ImVec2(x1, at.y + h - 1),
                        e.set < 0 ? IM_COL32(88, 88, 104, 255) : set_color(pools, pool), 2);
    ImGui::Dummy(ImVec2(width, h));
  }
  ImGui::EndTable();
}

void draw_selected(GraphEditor& ed) {
  PlanSession& s = ed.plan;
  if (s.selected < 0 || s.selected >= static_cast<int>(s.search.plans.size())) return;
  const planner::Plan& plan = s.search.plans[s.selected];
  ImGui::Separator();
  ImGui::Text("Plan #%d on %d %s device(s): step %s, %.0f tokens/s", s.selected + 1, s.devices,
              s.profile.c_str(), planner::seconds_text(plan.step.seconds).c_str(), plan.tokens_per_second);
  items().record_last_item("plan/selected");
  draw_sets(s, plan);
  ImGui::Spacing();
  draw_stages(s, plan);
  ImGui::Spacing();
  const bool current = plans_are_current(s, *ed.doc);
  if (!current) ImGui::BeginDisabled();
  if (recorded_button("Apply plan")) {
    apply_selected_plan(s, *ed.doc);
    ed.status = s.error.empty() ? s.note : s.error;
  }
  if (!current) ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::TextDisabled(
      "writes its pools (%s) and each model's parallel into the document; Undo puts them back",
      s.pool_device.c_str());
}

}  // namespace

void open_plan_panel(GraphEditor& ed) {
  PlanSession& s = ed.plan;
  s.open = true;
  if (s.request.profile.empty()) s.request.profile = default_plan_profile();
  // Until a search ran, start from the devices the experiment uses now.
  if (s.search.plans.empty() && s.error.empty() && ed.doc) {
    int workers = 0;
    for (const auto& [name, pool] : ed.doc->experiment().pools) workers += pool.workers;
    if (workers > 0) s.request.devices = workers;
  }
}

void draw_plan_panel(GraphEditor& ed) {
  PlanSession& s = ed.plan;
  if (!s.open || !ed.doc || !ed.doc->loaded()) return;
  const ImVec2 at(ed.canvas_origin.x + 12, ed.canvas_origin.y + 12);
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  ImGui::SetNextWindowPos(at, ImGuiCond_Appearing);
  ImGui::SetNextWindowSize(
      ImVec2(std::min(1240.0f, display.x - at.x - 8), std::min(660.0f, display.y - at.y - 8)),
      ImGuiCond_Appearing);
  ImGui::SetNextWindowBgAlpha(1.0f);  // tables of numbers over the canvas's lines read badly
  const bool visible = ImGui::Begin("Plan: placements and parallel layouts###plan", &s.open,
                                    ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoCollapse);
  items().record("plan/window", ImGui::GetWindowPos(),
                 ImVec2(ImGui::GetWindowPos().x + ImGui::GetWindowSize().x,
                        ImGui::GetWindowPos().y + ImGui::GetWindowSize().y));
  if (!visible) {
    ImGui::End();
    return;
  }
  draw_request(ed);
  ImGui::SameLine();
  if (ImGui::Button("Close##plan")) s.open = false;
  items().record_last_item("button/Close plan");
  if (!s.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorText);
    ImGui::TextWrapped("%s", s.error.c_str());
    ImGui::PopStyleColor();
    items().record_last_item("plan/error");
  }
  if (!s.search.plans.empty()) {
    ImGui::TextDisabled("%s", s.summary.c_str());
    items().record_last_item("plan/summary");
    ImGui::TextDisabled(
        "Each plan's graph file validates as if this machine had %d devices; the Problems list "
        "checks this machine.",
        s.devices);
    if (!plans_are_current(s, *ed.doc)) {
      ImGui::TextColored(kWarningText,
                         "The experiment changed since this search: Search again to apply a plan.");
      items().record_last_item("plan/stale");
    }
    draw_plan_list(s);
    draw_selected(ed);
  } else if (s.error.empty()) {
    ImGui::TextDisabled(
        "Search lists the placements that fit, fastest simulated step first (docs/planner.md).");
  }
  if (!s.note.empty()) {
    ImGui::TextUnformatted(s.note.c_str());
    items().record_last_item("plan/note");
  }
  ImGui::End();
}

}  // namespace rlwb::ui
