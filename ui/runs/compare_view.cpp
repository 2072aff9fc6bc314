// [SECTION] Runs side by side: overlaid metrics (a colour per run, or a mean
// line with a min-max band per group of runs), the config diff and the
// summary table, with CSV export. The tables come from core's run_compare.h,
// like `rlwb runs compare`.
#include <algorithm>
#include <fstream>

#include "core/tracking/headline_metrics.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/platform/item_registry.h"
#include "ui/runs/runs_views.h"

namespace rlwb::ui {
namespace {

std::string param_of(const RunData& run, const std::string& key) {
  for (const auto& [k, v] : run.params)
    if (k == key) return v;
  return "(none)";
}

// Runs grouped by the value of state.group_by, in order of first appearance.
std::vector<std::pair<std::string, std::vector<RunData*>>> groups_of(RunStore& store,
                                                                     const CompareState& state) {
  std::vector<std::pair<std::string, std::vector<RunData*>>> groups;
  for (int64_t id : state.runs) {
    RunData* run = store.run(id);
    if (!run) continue;
    std::string value = param_of(*run, state.group_by);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == value; });
    if (it == groups.end())
      groups.push_back({value, {run}});
    else
      it->second.push_back(run);
  }
  return groups;
}

uint64_t data_version(RunStore& store, const CompareState& state) {
  uint64_t v = 1469598103934665603ull;
  for (int64_t id : state.runs)
    if (RunData* r = store.run(id)) v = (v ^ r->version) * 1099511628211ull ^ static_cast<uint64_t>(id);
  return v;
}

// One legend entry (swatch + label), wrapping to a new line when the row is full.
void legend_entry(size_t index, const std::string& label, const std::string& item, bool first) {
  const float width = 12 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label.c_str()).x;
  if (!first) {
    ImGui::SameLine(0, 16);
    if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
  }
  ImGui::ColorButton(("##legend" + item).c_str(), ImGui::ColorConvertU32ToFloat4(series_color(index)),
                     ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::TextUnformatted(label.c_str());
  items().record_last_item(item);
}

void draw_legend(RunStore& store, CompareState& state) {
  if (state.group_by.empty()) {
    for (size_t i = 0; i < state.runs.size(); ++i) {
      RunData* run = store.run(state.runs[i]);
      legend_entry(i, run ? run_label(*run) : "#" + std::to_string(state.runs[i]) + " (missing)",
                   "legend/" + std::to_string(state.runs[i]), i == 0);
    }
  } else {
    auto groups = groups_of(store, state);
    for (size_t i = 0; i < groups.size(); ++i)
      legend_entry(
          i,
          state.group_by + "=" + groups[i].first + " (" + std::to_string(groups[i].second.size()) + " runs)",
          "legend/group/" + groups[i].first, i == 0);
  }
}

void update_tables(RunStore& store, CompareState& state, const std::vector<std::string>& metrics) {
  uint64_t v = data_version(store, state) * 31 + (state.all_keys ? 1 : 0) + (state.layout_keys ? 2 : 0) +
               static_cast<uint64_t>(state.at_step + 7) * 131;
  for (const auto& m : metrics) v = v * 1099511628211ull ^ std::hash<std::string>()(m);
  if (v == state.tables_version) return;
  state.tables_version = v;
  std::vector<core::ParamList> params;
  for (int64_t id : state.runs) {
    RunData* run = store.run(id);
    params.push_back(run ? run->params : core::ParamList{});
  }
  state.diff = core::config_diff(params, {.all_keys = state.all_keys, .layout_keys = state.layout_keys});
  state.summary.clear();
  std::optional<int64_t> at;
  if (state.at_step >= 0) at = state.at_step;
  for (const auto& metric : metrics)
    for (int64_t id : state.runs) {
      RunData* run = store.run(id);
      if (!run) continue;
      auto it = run->metrics.find(metric);
      core::MetricRunSummary row;
      if (it != run->metrics.end())
        row = core::summarize_series(it->second.step, it->second.value, core::best_direction(metric), at);
      row.run = id;
      row.run_name = run->info.name;
      row.metric = metric;
      state.summary.push_back(row);
    }
}

void draw_diff(CompareState& state) {
  ImGui::Checkbox("show all keys", &state.all_keys);
  items().record_last_item("compare/all_keys");
  // The editor's node positions (layout:) differ between any two files saved
  // by hand; they say nothing about the run, so they wait to be asked for.
  ImGui::SameLine();
  const std::string layout_label =
      state.diff.hidden_layout_keys > 0
          ? "show layout keys (" + std::to_string(state.diff.hidden_layout_keys) + " hidden)###layout_keys"
          : std::string("show layout keys###layout_keys");
  ImGui::Checkbox(layout_label.c_str(), &state.layout_keys);
  items().record_last_item("compare/layout_keys");
  ImGui::SameLine();
  ImGui::TextDisabled("%zu key(s) %s", state.diff.rows.size(), state.all_keys ? "" : "differ");
  const int columns = 1 + static_cast<int>(state.runs.size());
  if (columns > 63) return;
  if (ImGui::BeginTable("diff", columns,
                        ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit,
                        ImVec2(0, ImGui::GetContentRegionAvail().y * 0.45f))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("key");
    for (int64_t id : state.runs) ImGui::TableSetupColumn(("#" + std::to_string(id)).c_str());
    ImGui::TableHeadersRow();
    for (const core::ConfigDiffRow& row : state.diff.rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      if (row.differs)
        ImGui::TextColored(ImVec4(1, 0.8f, 0.4f, 1), "%s", row.key.c_str());
      else
        ImGui::TextUnformatted(row.key.c_str());
      items().record_last_item("diff/" + row.key);
      for (const auto& value : row.values) {
        ImGui::TableNextColumn();
        if (value)
          ImGui::TextUnformatted(value->c_str());
        else
          ImGui::TextDisabled("-");
      }
    }
    ImGui::EndTable();
  }
  items().record_last_item("compare/diff_table");
}

void draw_summary(CompareState& state) {
  ImGui::SetNextItemWidth(110);
  ImGui::InputInt("at step (-1: off)", &state.at_step);
  if (state.at_step < -1) state.at_step = -1;
  ImGui::SetNextItemWidth(220);
  ImGui::InputText("##csv", &state.csv_path);
  items().record_last_item("compare/csv_path");
  ImGui::SameLine();
  if (recorded_button("Export CSV")) {
    std::ofstream out(state.csv_path, std::ios::binary);
    out << core::summary_csv(state.summary);
    state.status = out ? "wrote " + state.csv_path : "cannot write " + state.csv_path;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%s", state.status.c_str());
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_Sortable | ImGuiTableFlags_SizingStretchProp;
  if (ImGui::BeginTable("summary", 6, flags, ImVec2(0, ImGui::GetContentRegionAvail().y))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("metric", ImGuiTableColumnFlags_DefaultSort, 2.0f, 0);
    ImGui::TableSetupColumn("run", 0, 1.0f, 1);
    ImGui::TableSetupColumn("last", 0, 1.0f, 2);
    ImGui::TableSetupColumn("best", 0, 1.0f, 3);
    ImGui::TableSetupColumn("best step", 0, 0.7f, 4);
    ImGui::TableSetupColumn("at step", 0, 1.0f, 5);
    ImGui::TableHeadersRow();
    std::vector<const core::MetricRunSummary*> rows;
    for (const auto& r : state.summary) rows.push_back(&r);
    if (const ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0) {
      const auto& s = specs->Specs[0];
      auto key = [&](const core::MetricRunSummary* r) -> std::pair<double, std::string> {
        switch (s.ColumnUserID) {
          case 0:  // the order of the plots: the headline metrics first
            return {static_cast<double>(std::find(state.shown.begin(), state.shown.end(), r->metric) -
                                        state.shown.begin()),
                    ""};
          case 1:
            return {static_cast<double>(r->run), ""};
          case 2:
            return {r->last_step ? r->last : -INFINITY, ""};
          case 3:
            return {r->best_step ? r->best : -INFINITY, ""};
          case 4:
            return {r->best_step ? static_cast<double>(*r->best_step) : -1, ""};
          default:
            return {r->at_step ? r->at_value : -INFINITY, ""};
        }
      };
      std::stable_sort(rows.begin(), rows.end(), [&](auto* a, auto* b) {
        auto ka = key(a), kb = key(b);
        return s.SortDirection == ImGuiSortDirection_Ascending ? ka < kb : kb < ka;
      });
    }
    for (const auto* r : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r->metric.c_str());
      items().record_last_item("summary/" + r->metric + "/" + std::to_string(r->run));
      ImGui::TableNextColumn();
      size_t index =
          static_cast<size_t>(std::find(state.runs.begin(), state.runs.end(), r->run) - state.runs.begin());
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series_color(index)), "#%lld",
                         static_cast<long long>(r->run));
      ImGui::TableNextColumn();
      if (r->last_step)
        ImGui::Text("%.5g", r->last);
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (r->best_step)
        ImGui::Text("%.5g", r->best);
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (r->best_step)
        ImGui::Text("%lld", static_cast<long long>(*r->best_step));
      else
        ImGui::TextDisabled("-");
      ImGui::TableNextColumn();
      if (r->at_step)
        ImGui::Text("%.5g", r->at_value);
      else
        ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
  }
}

}  // namespace

void draw_compare(RunStore& store, CompareState& state) {
  if (state.runs.size() < 2) {
    ImGui::TextDisabled("Select two or more runs in the Runs tab and press Compare.");
    return;
  }
  // Metric keys over all runs, and the params that differ (for grouping).
  std::set<std::string> key_set;
  for (int64_t id : state.runs)
    if (RunData* run = store.run(id))
      for (const auto& [k, s] : run->metrics) key_set.insert(k);
  const std::vector<std::string> keys =
      core::headline_first(std::vector<std::string>(key_set.begin(), key_set.end()));
  const std::vector<std::string> metrics = shown_metrics(keys, state.chosen, state.user_chose);
  state.shown = metrics;
  update_tables(store, state, metrics);

  draw_legend(store, state);
  // Scripts and the benchmark wait for "compare/loaded": every run's first read is in.
  const auto loading = std::count_if(state.runs.begin(), state.runs.end(),
                                     [&](int64_t id) { return !store.run(id) || store.loading(id); });
  if (loading > 0) {
    ImGui::SameLine(0, 16);
    ImGui::TextDisabled("loading %d of %zu runs...", static_cast<int>(loading), state.runs.size());
  } else {
    items().record_last_item("compare/loaded");
  }
  draw_plot_settings(state.plot);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(200);
  if (ImGui::BeginCombo("group by", state.group_by.empty() ? "(each run)" : state.group_by.c_str())) {
    if (ImGui::Selectable("(each run)", state.group_by.empty())) state.group_by.clear();
    std::vector<core::ParamList> params;
    for (int64_t id : state.runs) params.push_back(store.run(id) ? store.run(id)->params : core::ParamList{});
    for (const auto& row : core::config_diff(params).rows) {
      if (ImGui::Selectable(row.key.c_str(), state.group_by == row.key)) state.group_by = row.key;
      items().record_last_item("group_by/" + row.key);
    }
    ImGui::EndCombo();
  }
  items().record_last_item("compare/group_by");

  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float picker = 220, tables = avail.x * 0.36f;
  ImGui::BeginChild("compare_metrics", ImVec2(picker, avail.y), true);
  draw_metric_picker(keys, state.chosen, state.user_chose, state.metric_filter);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("compare_plots",
                    ImVec2(avail.x - picker - tables - 2 * ImGui::GetStyle().ItemSpacing.x, avail.y), false);
  const float w = state.plot.smoothing;
  const auto groups = state.group_by.empty() ? decltype(groups_of(store, state)){} : groups_of(store, state);
  const uint64_t version = data_version(store, state);
  draw_plot_grid(metrics, state.plot, state.plots, [&](const std::string& metric) {
    std::vector<PlotSeries> series;
    if (state.group_by.empty()) {
      for (size_t i = 0; i < state.runs.size(); ++i) {
        RunData* run = store.run(state.runs[i]);
        if (!run) continue;
        auto it = run->metrics.find(metric);
        if (it == run->metrics.end()) continue;
        MetricSeries& s = it->second;
        PlotSeries p;
        p.label = run_label(*run);
        p.color = series_color(i);
        p.x = state.plot.wall_time ? &s.wall : &s.step;
        p.y = &s.value;
        if (w > 0) p.smooth = &s.smoothed(w);
        p.version = plot_version(s.version, state.plot);
        p.cache = &state.caches[metric + "\t" + std::to_string(run->info.id)];
        series.push_back(p);
      }
      return series;
    }
    // Groups: mean line with a min-max band over the group's runs.
    auto& lines = state.groups[metric];
    const uint64_t v = plot_version(version, state.plot) ^ std::hash<std::string>()(state.group_by);
    if (state.group_versions[metric] != v) {
      lines.clear();
      for (const auto& [value, runs] : groups) {
        std::vector<std::span<const double>> xs, ys;
        for (RunData* run : runs)
          if (auto it = run->metrics.find(metric); it != run->metrics.end())
            xs.push_back(state.plot.wall_time ? it->second.wall : it->second.step),
                ys.push_back(it->second.value);
        CompareState::GroupLine line;
        line.label = state.group_by + "=" + value;
        line.band = band_over_runs(xs, ys);
        line.smooth = ema_smooth(line.band.mean, w);
        lines.push_back(std::move(line));
      }
      state.group_versions[metric] = v;
    }
    for (size_t i = 0; i < lines.size(); ++i) {
      auto& line = lines[i];
      PlotSeries p;
      p.label = line.label;
      p.color = series_color(i);
      p.x = &line.band.x;
      p.y = &line.band.mean;
      if (w > 0) p.smooth = &line.smooth;
      p.band_lo = &line.band.min;
      p.band_hi = &line.band.max;
      p.version = v;
      p.cache = &state.caches[metric + "\tgroup\t" + line.label];
      series.push_back(p);
    }
    return series;
  });
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("compare_tables", ImVec2(tables, avail.y), false);
  ImGui::TextUnformatted("Config diff");
  draw_diff(state);
  ImGui::Separator();
  ImGui::TextUnformatted("Summary");
  draw_summary(state);
  ImGui::EndChild();
}

}  // namespace rlwb::ui
