// [SECTION] One run, live: metric plots, events, samples. Plus the plot
// controls shared with the compare view.
#include <algorithm>
#include <cmath>

#include "core/tracking/headline_metrics.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/platform/item_registry.h"
#include "ui/runs/runs_views.h"

namespace rlwb::ui {

uint64_t plot_version(uint64_t data_version, const PlotSettings& settings) {
  return data_version * 1000003ull + (settings.wall_time ? 1 : 0) * 7919ull +
         static_cast<uint64_t>(std::lround(settings.smoothing * 1000)) * 13ull;
}

bool draw_plot_settings(PlotSettings& s) {
  bool changed = false;
  ImGui::SetNextItemWidth(120);
  int axis = s.wall_time ? 1 : 0;
  if (ImGui::Combo("x axis", &axis, "step\0wall time\0")) s.wall_time = axis == 1, changed = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(140);
  changed |= ImGui::SliderFloat("smoothing", &s.smoothing, 0.0f, 0.99f, "%.2f");
  ImGui::SameLine();
  changed |= ImGui::Checkbox("log y", &s.log_y);
  items().record_last_item("settings/log_y");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  changed |= ImGui::SliderInt("columns", &s.columns, 1, 4);
  return changed;
}

std::vector<std::string> shown_metrics(const std::vector<std::string>& keys,
                                       const std::set<std::string>& chosen, bool user_chose) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (user_chose ? chosen.count(k) > 0 : out.size() < kDefaultMetrics) out.push_back(k);
  }
  return out;
}

void draw_metric_picker(const std::vector<std::string>& keys, std::set<std::string>& chosen, bool& user_chose,
                        std::string& filter) {
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##metric_filter", "filter metrics", &filter);
  if (ImGui::SmallButton("all")) chosen.insert(keys.begin(), keys.end()), user_chose = true;
  ImGui::SameLine();
  if (ImGui::SmallButton("none")) chosen.clear(), user_chose = true;
  std::vector<std::string> shown = shown_metrics(keys, chosen, user_chose);
  for (const auto& key : keys) {
    if (!filter.empty() && key.find(filter) == std::string::npos) continue;
    bool on = std::find(shown.begin(), shown.end(), key) != shown.end();
    if (ImGui::Checkbox(key.c_str(), &on)) {
      if (!user_chose) chosen = std::set<std::string>(shown.begin(), shown.end()), user_chose = true;
      if (on)
        chosen.insert(key);
      else
        chosen.erase(key);
    }
    items().record_last_item("metric/" + key);
  }
}

namespace {

ImVec4 level_color(const std::string& level) {
  if (level == "error") return ImVec4(1, 0.45f, 0.4f, 1);
  if (level == "warning") return ImVec4(1, 0.75f, 0.3f, 1);
  if (level == "debug") return ImVec4(0.6f, 0.6f, 0.65f, 1);
  return ImVec4(0.85f, 0.87f, 0.9f, 1);
}

void draw_events(const RunData& run) {
  if (ImGui::BeginTable("events", 4,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Borders |
                            ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("time (s)", 0, 0.6f);
    ImGui::TableSetupColumn("level", 0, 0.5f);
    ImGui::TableSetupColumn("source", 0, 0.8f);
    ImGui::TableSetupColumn("text", 0, 5.0f);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < run.events.size(); ++i) {
      const core::EventRecord& e = run.events[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%.2f", e.time - run.info.start_time);
      items().record_last_item("dashboard/event/" + std::to_string(i));
      ImGui::TableNextColumn();
      ImGui::TextColored(level_color(e.level), "%s", e.level.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(e.source.c_str());
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", e.text.c_str());
    }
    ImGui::EndTable();
  }
}

void draw_samples(const RunData& run, DashboardState& state) {
  if (run.samples.empty()) {
    ImGui::TextDisabled("This run logged no samples.");
    return;
  }
  std::vector<int64_t> steps;
  for (const auto& s : run.samples)
    if (steps.empty() || steps.back() != s.step) steps.push_back(s.step);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  if (state.sample_step < 0 || !std::binary_search(steps.begin(), steps.end(), state.sample_step))
    state.sample_step = static_cast<int>(steps.back());
  int index =
      static_cast<int>(std::lower_bound(steps.begin(), steps.end(), state.sample_step) - steps.begin());
  ImGui::SetNextItemWidth(300);
  if (ImGui::SliderInt("step", &index, 0, static_cast<int>(steps.size()) - 1,
                       std::to_string(steps[index]).c_str()))
    state.sample_step = static_cast<int>(steps[index]);
  if (ImGui::BeginTable("samples", 4,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Borders |
                            ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_Resizable)) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("prompt", 0, 2.0f);
    ImGui::TableSetupColumn("response", 0, 3.0f);
    ImGui::TableSetupColumn("reward", 0, 0.5f);
    ImGui::TableSetupColumn("details", 0, 2.0f);
    ImGui::TableHeadersRow();
    int shown = 0;
    for (const auto& s : run.samples) {
      if (s.step != state.sample_step) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", s.prompt.c_str());
      items().record_last_item("sample/" + std::to_string(shown++));
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", s.response.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%.4g", s.reward);
      ImGui::TableNextColumn();
      ImGui::TextWrapped("%s", s.details.is_null() ? "" : s.details.dump().c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace

void draw_dashboard(RunStore& store, DashboardState& state) {
  RunData* run = state.run ? store.run(state.run) : nullptr;
  if (!run) {
    ImGui::TextDisabled(state.run ? "Run %lld is not in the database (yet)."
                                  : "Pick a run in the Runs tab (double-click, or Dashboard).",
                        static_cast<long long>(state.run));
    return;
  }
  const core::RunInfo& info = run->info;
  ImGui::Text("%s", run_label(*run).c_str());
  ImGui::SameLine();
  ImVec4 color = info.status == "failed"    ? ImVec4(1, 0.45f, 0.4f, 1)
                 : info.status == "running" ? ImVec4(0.4f, 0.75f, 1, 1)
                                            : ImVec4(0.45f, 0.9f, 0.5f, 1);
  ImGui::TextColored(color, "%s", info.status.c_str());
  items().record_last_item("dashboard/status/" + info.status);
  ImGui::SameLine();
  ImGui::TextDisabled("%s  %s  step %lld  %llu points%s", info.experiment_file.c_str(),
                      info.algorithm.c_str(), static_cast<long long>(info.last_step),
                      static_cast<unsigned long long>(run->points),
                      store.loading(info.id) ? "  (loading...)" : "");
  items().record_last_item("dashboard/summary");
  // A run that died says why: its last error event. A run that finished
  // after one (its workers were restarted) says what it recovered from.
  for (auto it = run->events.rbegin(); it != run->events.rend(); ++it)
    if (it->level == "error") {
      if (info.status == "finished") {
        ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "recovered from (%s): %s", it->source.c_str(),
                           it->text.c_str());
        items().record_last_item("dashboard/recovered");
      } else {
        ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "error (%s): %s", it->source.c_str(), it->text.c_str());
        items().record_last_item("dashboard/error");
      }
      break;
    }
  draw_plot_settings(state.plot);
  ImGui::SameLine();
  if (recorded_button("Fit all"))
    for (auto& [k, p] : state.plots) p.auto_fit = true;

  if (ImGui::BeginTabBar("dashboard_tabs")) {
    bool plots = ImGui::BeginTabItem("Plots");
    items().record_last_item("tab/Plots");
    if (plots) {
      std::vector<std::string> names;
      for (const auto& [k, s] : run->metrics) names.push_back(k);
      const std::vector<std::string> keys = core::headline_first(names);
      ImGui::BeginChild("metric_list", ImVec2(240, 0), true);
      draw_metric_picker(keys, state.chosen, state.user_chose, state.metric_filter);
      ImGui::EndChild();
      ImGui::SameLine();
      ImGui::BeginChild("plots", ImVec2(0, 0), false);
      if (keys.empty())
        ImGui::TextDisabled(store.loading(info.id) ? "loading metrics..." : "no metrics logged yet");
      const float w = state.plot.smoothing;
      state.shown = shown_metrics(keys, state.chosen, state.user_chose);
      draw_plot_grid(state.shown, state.plot, state.plots, [&](const std::string& key) {
        MetricSeries& s = run->metrics[key];
        PlotSeries p;
        p.label = run_label(*run);
        p.color = series_color(0);
        p.x = state.plot.wall_time ? &s.wall : &s.step;
        p.y = &s.value;
        if (w > 0) p.smooth = &s.smoothed(w);
        p.version = plot_version(s.version, state.plot);
        p.cache = &state.caches[key];
        return std::vector<PlotSeries>{p};
      });
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    bool events =
        ImGui::BeginTabItem(("Events (" + std::to_string(run->events.size()) + ")###events").c_str());
    items().record_last_item("tab/Events");
    if (events) {
      draw_events(*run);
      ImGui::EndTabItem();
    }
    bool samples =
        ImGui::BeginTabItem(("Samples (" + std::to_string(run->samples.size()) + ")###samples").c_str());
    items().record_last_item("tab/Samples");
    if (samples) {
      draw_samples(*run, state);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
}

}  // namespace rlwb::ui
