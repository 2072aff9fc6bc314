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

// One row per key of any run, sorted by key; only the rows whose values
// differ (a missing key differs from any value) unless `all_keys`.
std::vector<ConfigDiffRow> config_diff(const std::vector<ParamList>& params, bool all_keys = false);

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
  std::vector<ConfigDiffRow> diff;
  size_t param_keys = 0;  // keys over all runs (diff may show fewer)
  bool all_keys = false;  // diff holds every key, not only differing ones
  std::vector<std::string> metrics;
  std::vector<MetricRunSummary> summary;  // for each metric, each run in order
  std::optional<int64_t> at_step;
};

// Reads the runs (throws TrackingError naming a missing id, or a metric in
// `metrics` that none of the runs logged). `metrics` empty: every metric
// any of the runs logged.
RunComparison compare_runs(TrackingReader& reader, const std::vector<int64_t>& ids,
                           const std::vector<std::string>& metrics = {},
                           std::optional<int64_t> at_step = std::nullopt, bool all_keys = false);

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
