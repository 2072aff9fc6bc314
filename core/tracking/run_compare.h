// Comparing runs side by side: the config diff (params that differ), a
// summary per metric and run (last value, best value, value at a chosen
// step), CSV of that summary, and a run's metrics exported as CSV or JSON
// lines. One implementation for `rlwb runs compare`, `rlwb runs export` and
// the GUI's compare view (ui/runs), so the numbers always agree.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tracking/tracking.h"

namespace rlwb::core {

using ParamList = std::vector<std::pair<std::string, std::string>>;

struct ConfigDiffRow {
  std::string key;
  std::vector<std::optional<std::string>> values;  // one per run; nullopt: the run lacks the key
  bool differs = false;
};

// Whether a param is under the graph file's `layout:` (the GUI editor's node
// positions, `layout.<node>.x`): where a node was drawn, not how the run
// ran, so the diff leaves these out unless asked.
bool is_layout_key(const std::string& key);

struct ConfigDiffOptions {
  bool all_keys = false;     // every key, not only those whose values differ
  bool layout_keys = false;  // also the keys under `layout:` (is_layout_key)
};

struct ConfigDiff {
  std::vector<ConfigDiffRow> rows;  // sorted by key
  size_t keys = 0;                  // keys over all runs, layout keys only when asked for
  size_t differing = 0;             // of those, the keys whose values differ
  size_t hidden_layout_keys = 0;    // rows left out because they are layout keys
};

// One row per key of any run; only the rows whose values differ (a missing
// key differs from any value) unless `all_keys`; no layout keys unless
// `layout_keys` (then counted in hidden_layout_keys).
ConfigDiff config_diff(const std::vector<ParamList>& params, ConfigDiffOptions options = {});

enum class BestIs { higher, lower };
// Whether a metric improves upward or downward, from its name: losses, KL,
// timings, latencies, perplexity, clip fractions and errors are better
// lower; scores, rewards, accuracies, throughput and anything else higher.
BestIs best_direction(const std::string& metric);

struct MetricRunSummary {
  int64_t run = 0;
  std::string run_name;
  std::string metric;
  int64_t count = 0;                 // non-NaN points
  std::optional<int64_t> last_step;  // highest step
  double last = 0;
  std::optional<int64_t> best_step;
  double best = 0;
  std::optional<int64_t> at_step;  // the step used for "at step" (<= the asked one)
  double at_value = 0;
};

// Summary of one series (steps ascending). NaN values are skipped. `at`:
// the value at the highest step <= at (none when no step is that low).
MetricRunSummary summarize_series(std::span<const double> steps, std::span<const double> values, BestIs best,
                                  std::optional<int64_t> at = std::nullopt);

struct RunComparison {
  std::vector<RunInfo> runs;
  ConfigDiff diff;
  ConfigDiffOptions diff_options;
  std::vector<std::string> metrics;       // the headline metrics first (headline_metrics.h)
  std::vector<MetricRunSummary> summary;  // for each metric, each run in order
  std::optional<int64_t> at_step;
};

// Reads the runs (throws TrackingError naming a missing id, or a metric in
// `metrics` that none of the runs logged). `metrics` empty: every metric
// any of the runs logged, the headline metrics first, then by name.
RunComparison compare_runs(TrackingReader& reader, const std::vector<int64_t>& ids,
                           const std::vector<std::string>& metrics = {},
                           std::optional<int64_t> at_step = std::nullopt,
                           ConfigDiffOptions diff_options = {});

// The CLI's text: runs, config diff, summary, as aligned columns.
std::string format_comparison(const RunComparison& comparison);

// run_id,run_name,metric,count,last_step,last,best_step,best,at_step,at_value
// (empty cells where a run has no value); RFC 4180 quoting.
std::string summary_csv(const std::vector<MetricRunSummary>& summary);

// Every metric point of a run, in rowid order: "csv" writes
// run_id,key,step,value,wall_time; "jsonl" one JSON object a line with the
// same fields (NaN as null). Throws TrackingError for an unknown run or format.
void export_run_metrics(TrackingReader& reader, int64_t run, const std::string& format, std::ostream& out);

// A number as the reports print it: shortest text that reads back exactly; "nan".
std::string format_metric_value(double value);

}  // namespace rlwb::core
