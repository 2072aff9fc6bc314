// The text of `rlwb runs list` (format_runs_table) and `rlwb runs show ID`
// (format_run_details): aligned plain text, one section per table of the
// tracking DB; metrics with the headline ones first (headline_metrics.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "core/tracking/headline_metrics.h"
#include "core/tracking/text_table.h"
#include "core/tracking/time_now.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

constexpr int kEventsShown = 10;
constexpr const char* kTimingPrefix = "timing_s/";
constexpr const char* kTimestamp = "%Y-%m-%d %H:%M:%S";

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string format_local_time(double unix_seconds, const char* pattern) {
  const auto seconds = static_cast<std::time_t>(unix_seconds);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[64];
  std::strftime(text, sizeof text, pattern, &local);
  return text;
}

// 42s, 12m05s, 3h07m, 2d04h.
std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(std::max(0.0, seconds));
  char text[32];
  if (total < 60) {
    std::snprintf(text, sizeof text, "%llds", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  } else if (total < 86400) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, total % 3600 / 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", total / 86400, total % 86400 / 3600);
  }
  return text;
}

// Until the run ends, its duration runs on.
double run_duration(const RunInfo& run) {
  return (run.end_time > 0 ? run.end_time : unix_time_now()) - run.start_time;
}

std::string format_step(int64_t last_step) { return last_step < 0 ? "-" : std::to_string(last_step); }

bool is_timing(const std::string& key) { return key.rfind(kTimingPrefix, 0) == 0; }

std::string section(const std::string& title, const std::string& body) {
  return "\n" + title + "\n" + (body.empty() ? "  (none)\n" : body);
}

std::string run_fields(const RunInfo& run, const std::vector<std::pair<std::string, std::string>>& tags) {
  std::vector<std::vector<std::string>> rows = {
      {"status", run.status},
      {"algorithm", run.algorithm},
      {"experiment", run.experiment_file},
      {"host", run.host + (run.pid > 0 ? " (pid " + std::to_string(run.pid) + ")" : "")},
      {"seed", std::to_string(run.seed)},
      {"started", format_local_time(run.start_time, kTimestamp)},
      {"ended", run.end_time > 0 ? format_local_time(run.end_time, kTimestamp) : "-"},
      {"duration", format_duration(run_duration(run))},
      {"last step", format_step(run.last_step)},
  };
  if (run.last_score) rows.push_back({"last score", format_number(*run.last_score)});
  if (run.from_run > 0) rows.push_back({"from run", std::to_string(run.from_run) + " (relaunched from it)"});
  for (const auto& [key, value] : tags) rows.push_back({"tag " + key, value});
  return render_text_table(rows, "  ");
}

// The headline metrics first (headline_metrics.h), then by key.
std::string metrics_section(const std::vector<MetricSummary>& summaries) {
  std::map<std::string, const MetricSummary*> by_key;
  std::vector<std::string> keys;
  for (const MetricSummary& metric : summaries) {
    if (is_timing(metric.key)) continue;
    by_key[metric.key] = &metric;
    keys.push_back(metric.key);
  }
  std::vector<std::vector<std::string>> rows = {{"KEY", "STEP", "LAST", "MIN", "MAX"}};
  for (const std::string& key : headline_first(keys)) {
    const MetricSummary& metric = *by_key.at(key);
    rows.push_back({metric.key, std::to_string(metric.last_step), format_number(metric.last_value),
                    format_number(metric.min), format_number(metric.max)});
  }
  return rows.size() == 1 ? "" : render_text_table(rows, "  ");
}

// Where the time went: mean and total seconds per timing_s/* key.
std::string timing_section(const std::vector<MetricSummary>& summaries) {
  std::vector<std::vector<std::string>> rows = {{"KEY", "STEPS", "MEAN", "TOTAL", "LAST"}};
  for (const MetricSummary& metric : summaries) {
    if (!is_timing(metric.key)) continue;
    rows.push_back({metric.key, std::to_string(metric.count), format_number(metric.mean),
                    format_number(metric.sum), format_number(metric.last_value)});
  }
  return rows.size() == 1 ? "" : render_text_table(rows, "  ");
}

std::string params_section(const std::vector<std::pair<std::string, std::string>>& params) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(params.size());
  for (const auto& [key, value] : params) rows.push_back({key, value});
  return render_text_table(rows, "  ");
}

std::string artifacts_section(const std::vector<ArtifactRecord>& artifacts) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(artifacts.size());
  for (const ArtifactRecord& artifact : artifacts) {
    rows.push_back({format_local_time(artifact.time, kTimestamp), artifact.kind, artifact.path});
  }
  return render_text_table(rows, "  ");
}

std::string events_section(const std::vector<EventRecord>& events) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(events.size());
  for (const EventRecord& event : events) {
    rows.push_back({format_local_time(event.time, kTimestamp), event.level, event.source, event.text});
  }
  return render_text_table(rows, "  ");
}

}  // namespace

std::string format_runs_table(const std::vector<RunInfo>& runs) {
  if (runs.empty()) return "no runs recorded yet\n";
  std::vector<std::vector<std::string>> rows = {{"ID", "NAME", "ALGORITHM", "STATUS", "STEP",
                                                 std::string("SCORE (") + kRunScoreMetric + ")", "STARTED",
                                                 "DURATION"}};
  for (const RunInfo& run : runs) {
    rows.push_back({std::to_string(run.id), run.name, run.algorithm, run.status, format_step(run.last_step),
                    run.last_score ? format_number(*run.last_score) : "-",
                    format_local_time(run.start_time, "%Y-%m-%d %H:%M"), format_duration(run_duration(run))});
  }
  return render_text_table(rows);
}

std::string format_run_details(TrackingReader& reader, int64_t run_id) {
  const std::optional<RunInfo> run = reader.run(run_id);
  if (!run) {
    throw TrackingError(reader.path() + ": there is no run " + std::to_string(run_id) +
                        " (`rlwb runs list` shows the ids)");
  }
  const std::vector<MetricSummary> summaries = reader.metric_summaries(run_id);
  std::string text = "Run " + std::to_string(run->id) + ": " + run->name + "\n";
  text += run_fields(*run, reader.tags(run_id));
  text += section("Params", params_section(reader.params(run_id)));
  text += section("Metrics (value at the last step)", metrics_section(summaries));
  text += section("Timing (timing_s/*, seconds per step)", timing_section(summaries));
  text += section("Artifacts", artifacts_section(reader.artifacts(run_id)));
  text += section("Last events", events_section(reader.last_events(run_id, kEventsShown)));
  return text;
}

}  // namespace rlwb::core
