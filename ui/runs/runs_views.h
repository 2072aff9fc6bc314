// The tracking screens: the runs table, one run's live dashboard, and runs
// compared side by side. Each is a plain state struct owned by the app and
// a draw function; the data comes from RunStore (run_store.h).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/tracking/run_compare.h"
#include "ui/plot/line_plot.h"
#include "ui/runs/run_store.h"

namespace rlwb::ui {

// What the views ask the app to do (switch screens, open a run).
struct ViewRequests {
  int64_t open_dashboard = 0;    // run id
  std::vector<int64_t> compare;  // run ids
  int64_t open_in_editor = 0;    // run id: its experiment, as it ran, in the editor
  int64_t open_profile = 0;      // run id: its profile on the Profile screen
};

struct RunsTableState {
  std::string filter;        // text in name, experiment, algorithm, status or tags
  std::string param_filter;  // "key=value" (value may be a prefix); empty: all
  std::set<int64_t> selected;
  int64_t anchor = 0;            // last plainly clicked row, for shift-click ranges
  std::vector<int64_t> visible;  // rows shown, in order
  std::string rename_text, tag_text;
  std::vector<int64_t> delete_ids;  // waiting for confirmation
  std::string status;
  bool open_rename = false, open_tag = false, open_delete = false;
  // The runs that have a profile (the app sets it from ProfileLoader): the
  // Profile button is enabled for them.
  std::vector<int64_t> profiled;
};

// Settings shared by the dashboard and the compare view.
struct PlotSettings {
  bool wall_time = false;  // x axis: seconds since start instead of step
  float smoothing = 0.6f;  // EMA weight; 0 = raw only
  bool log_y = false;
  int columns = 2;
};

struct DashboardState {
  int64_t run = 0;
  std::set<std::string> chosen;  // metrics shown once the user picked some
  bool user_chose = false;       // until then: the first kDefaultMetrics keys
  std::string metric_filter;
  PlotSettings plot;
  std::map<std::string, PlotState> plots;
  std::map<std::string, PlotCache> caches;
  int tab = 0;  // 0 plots, 1 events, 2 samples
  int sample_step = -1;
  std::vector<std::string> shown;  // the plots drawn, in order (also for --dump-state)
};

struct CompareState {
  std::vector<int64_t> runs;
  std::set<std::string> chosen;
  bool user_chose = false;
  std::string metric_filter;
  std::string group_by;  // param key; empty: one line per run
  bool all_keys = false;
  bool layout_keys = false;  // the diff lists the keys under layout: too
  PlotSettings plot;
  std::map<std::string, PlotState> plots;
  std::map<std::string, PlotCache> caches;  // "metric\trun" or "metric\tgroup"
  struct GroupLine {
    std::string label;
    Band band;
    std::vector<double> smooth;
    uint64_t version = 0;
  };
  std::map<std::string, std::vector<GroupLine>> groups;  // metric -> lines
  std::map<std::string, uint64_t> group_versions;
  int at_step = -1;  // summary's "at step" (-1: none)
  std::string csv_path = "compare_summary.csv";
  std::string status;
  // What the plots and tables show (also for --dump-state).
  std::vector<std::string> shown;
  core::ConfigDiff diff;
  std::vector<core::MetricRunSummary> summary;
  uint64_t tables_version = UINT64_MAX;
};

// Metrics a view shows before the user picks: the first this many keys.
// Both views list the keys with the headline metrics first
// (core/tracking/headline_metrics.h), so these are among them.
inline constexpr size_t kDefaultMetrics = 12;

// [shared by the dashboard and the compare view]
// The x/smoothing/log/columns controls; returns true when any changed.
bool draw_plot_settings(PlotSettings& settings);
// A checkbox list of metric keys with a filter; `chosen` is the user's pick.
void draw_metric_picker(const std::vector<std::string>& keys, std::set<std::string>& chosen, bool& user_chose,
                        std::string& filter);
// The metrics to show: the user's pick, else the first kDefaultMetrics keys.
std::vector<std::string> shown_metrics(const std::vector<std::string>& keys,
                                       const std::set<std::string>& chosen, bool user_chose);
// Panels in a grid, `settings.columns` wide; `series_of(metric)` gives the
// lines of one panel. Panels scrolled out of view are not built.
template <typename SeriesOf>
void draw_plot_grid(const std::vector<std::string>& metrics, const PlotSettings& settings,
                    std::map<std::string, PlotState>& states, SeriesOf&& series_of);

void draw_runs_table(RunStore& store, RunsTableState& state, ViewRequests& requests);
void draw_dashboard(RunStore& store, DashboardState& state);
void draw_compare(RunStore& store, CompareState& state);

// A run's line in the table and the views: "#3 demo".
std::string run_label(const RunData& run);

// The cache version of a series drawn with these settings.
uint64_t plot_version(uint64_t data_version, const PlotSettings& settings);

template <typename SeriesOf>
void draw_plot_grid(const std::vector<std::string>& metrics, const PlotSettings& settings,
                    std::map<std::string, PlotState>& states, SeriesOf&& series_of) {
  const int columns = settings.columns < 1 ? 1 : settings.columns;
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  const float width = (ImGui::GetContentRegionAvail().x - spacing * (columns - 1)) / columns;
  // Few panels grow to fill the screen; many keep a readable height and scroll.
  const size_t rows = (metrics.size() + columns - 1) / columns;
  const float line = ImGui::GetTextLineHeightWithSpacing() + ImGui::GetStyle().ItemSpacing.y;
  float height = rows ? ImGui::GetContentRegionAvail().y / static_cast<float>(rows) - line : 230;
  height = height < 220 ? 220 : height > 420 ? 420 : height;
  PlotOptions options;
  options.x_label = settings.wall_time ? "seconds" : "step";
  options.log_y = settings.log_y;
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (i % columns != 0) ImGui::SameLine();
    ImGui::BeginGroup();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const ImVec2 size(width, height + ImGui::GetTextLineHeightWithSpacing());
    if (!ImGui::IsRectVisible(at, ImVec2(at.x + size.x, at.y + size.y))) {
      ImGui::Dummy(size);  // off screen: nothing to build
    } else {
      ImGui::TextUnformatted(metrics[i].c_str());
      std::vector<PlotSeries> series = series_of(metrics[i]);
      line_plot(("plot/" + metrics[i]).c_str(), states[metrics[i]], series, options, ImVec2(width, height));
    }
    ImGui::EndGroup();
  }
}

}  // namespace rlwb::ui
