// Run comparison and export (run_compare.h): pure summaries over series,
// plus the reads and text the CLI prints.
#include "core/tracking/run_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>

#include "core/tracking/headline_metrics.h"
#include "core/tracking/text_table.h"

namespace rlwb::core {
namespace {

std::string short_number(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

bool contains_word(const std::string& metric, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (metric.find(w) != std::string::npos) return true;
  return false;
}

}  // namespace

std::string format_metric_value(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

bool is_layout_key(const std::string& key) { return key == "layout" || key.rfind("layout.", 0) == 0; }

ConfigDiff config_diff(const std::vector<ParamList>& params, ConfigDiffOptions options) {
  std::map<std::string, ConfigDiffRow> rows;
  for (size_t r = 0; r < params.size(); ++r)
    for (const auto& [key, value] : params[r]) {
      ConfigDiffRow& row = rows[key];
      row.key = key;
      row.values.resize(params.size());
      row.values[r] = value;
    }
  ConfigDiff diff;
  for (auto& [key, row] : rows) {
    row.values.resize(params.size());
    row.differs =
        std::adjacent_find(row.values.begin(), row.values.end(), std::not_equal_to<>()) != row.values.end();
    const bool shown = options.all_keys || row.differs;
    if (!options.layout_keys && is_layout_key(key)) {
      diff.hidden_layout_keys += shown;
      continue;
    }
    ++diff.keys;
    diff.differing += row.differs;
    if (shown) diff.rows.push_back(std::move(row));
  }
  return diff;
}

BestIs best_direction(const std::string& metric) {
  if (contains_word(metric, {"loss", "kl", "timing", "time_s", "error", "clipfrac", "perplexity", "latency"}))
    return BestIs::lower;
  return BestIs::higher;
}

MetricRunSummary summarize_series(std::span<const double> steps, std::span<const double> values, BestIs best,
                                  std::optional<int64_t> at) {
  MetricRunSummary s;
  for (size_t i = 0; i < steps.size() && i < values.size(); ++i) {
    double v = values[i];
    if (std::isnan(v)) continue;
    auto step = static_cast<int64_t>(steps[i]);
    ++s.count;
    if (!s.last_step || step >= *s.last_step) s.last_step = step, s.last = v;
    bool better = !s.best_step || (best == BestIs::higher ? v > s.best : v < s.best);
    if (better) s.best_step = step, s.best = v;
    if (at && step <= *at && (!s.at_step || step >= *s.at_step)) s.at_step = step, s.at_value = v;
  }
  return s;
}

RunComparison compare_runs(TrackingReader& reader, const std::vector<int64_t>& ids,
                           const std::vector<std::string>& metrics, std::optional<int64_t> at_step,
                           ConfigDiffOptions diff_options) {
  RunComparison c;
  c.at_step = at_step;
  std::vector<ParamList> params;
  std::set<std::string> all_metrics;
  for (int64_t id : ids) {
    auto info = reader.run(id);
    if (!info) throw TrackingError("no run " + std::to_string(id) + " in " + reader.path());
    c.runs.push_back(*info);
    params.push_back(reader.params(id));
    for (const auto& key : reader.metric_keys(id)) all_metrics.insert(key);
  }
  c.diff_options = diff_options;
  c.diff = config_diff(params, diff_options);
  c.metrics = metrics.empty()
                  ? headline_first(std::vector<std::string>(all_metrics.begin(), all_metrics.end()))
                  : metrics;
  for (const std::string& metric : metrics)
    if (!all_metrics.count(metric)) {
      std::string known;
      for (const std::string& k : all_metrics) known += (known.empty() ? "" : ", ") + k;
      throw TrackingError("none of the runs logged metric '" + metric +
                          "'; they logged: " + (known.empty() ? "(no metrics)" : known));
    }
  for (const std::string& metric : c.metrics) {
    for (const RunInfo& run : c.runs) {
      std::vector<double> steps, values;
      for (const MetricPoint& p : reader.metrics(run.id, 0, metric)) {
        steps.push_back(static_cast<double>(p.step));
        values.push_back(p.value);
      }
      // Points come in rowid order; a summary wants steps ascending.
      std::vector<size_t> order(steps.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return steps[a] < steps[b]; });
      std::vector<double> s2, v2;
      for (size_t i : order) s2.push_back(steps[i]), v2.push_back(values[i]);
      MetricRunSummary row = summarize_series(s2, v2, best_direction(metric), at_step);
      row.run = run.id;
      row.run_name = run.name;
      row.metric = metric;
      c.summary.push_back(std::move(row));
    }
  }
  return c;
}

std::string format_comparison(const RunComparison& c) {
  std::string out = "runs\n";
  std::vector<std::vector<std::string>> rows = {{"id", "name", "status", "algorithm", "last step"}};
  for (const RunInfo& run : c.runs)
    rows.push_back({std::to_string(run.id), run.name, run.status, run.algorithm,
                    run.last_step < 0 ? "-" : std::to_string(run.last_step)});
  out += render_text_table(rows, "  ");

  out += "\nconfig: " + std::to_string(c.diff.differing) + " of " + std::to_string(c.diff.keys) +
         " keys differ" + (c.diff_options.all_keys ? " (all keys shown)" : "");
  if (c.diff.hidden_layout_keys > 0)
    out += "; " + std::to_string(c.diff.hidden_layout_keys) + " GUI layout " +
           (c.diff.hidden_layout_keys == 1 ? "key" : "keys") + " hidden (--layout-keys shows them)";
  out += "\n";
  if (c.diff.rows.empty()) {
    out += "  (no differences)\n";
  } else {
    rows = {{"key"}};
    for (const RunInfo& run : c.runs) rows[0].push_back("run " + std::to_string(run.id));
    for (const ConfigDiffRow& row : c.diff.rows) {
      std::vector<std::string> line = {row.key};
      for (const auto& v : row.values) line.push_back(v ? *v : "-");
      rows.push_back(line);
    }
    out += render_text_table(rows, "  ");
  }

  out += "\nsummary";
  if (c.at_step) out += " (at step " + std::to_string(*c.at_step) + ")";
  out += "\n";
  if (c.summary.empty()) {
    out += "  (no metrics)\n";
    return out;
  }
  rows = {{"metric", "run", "last", "best", "best step"}};
  if (c.at_step) rows[0].push_back("at step");
  for (const MetricRunSummary& s : c.summary) {
    std::vector<std::string> line = {
        s.metric, std::to_string(s.run),
        s.last_step ? short_number(s.last) + " @" + std::to_string(*s.last_step) : "-",
        s.best_step ? short_number(s.best) : "-", s.best_step ? std::to_string(*s.best_step) : "-"};
    if (c.at_step) line.push_back(s.at_step ? short_number(s.at_value) : "-");
    rows.push_back(line);
  }
  out += render_text_table(rows, "  ");
  return out;
}

std::string summary_csv(const std::vector<MetricRunSummary>& summary) {
  std::string out = "run_id,run_name,metric,count,last_step,last,best_step,best,at_step,at_value\n";
  auto opt_step = [](const std::optional<int64_t>& s) { return s ? std::to_string(*s) : std::string(); };
  for (const MetricRunSummary& s : summary) {
    out += std::to_string(s.run) + "," + csv_cell(s.run_name) + "," + csv_cell(s.metric) + "," +
           std::to_string(s.count) + "," + opt_step(s.last_step) + "," +
           (s.last_step ? format_metric_value(s.last) : "") + "," + opt_step(s.best_step) + "," +
           (s.best_step ? format_metric_value(s.best) : "") + "," + opt_step(s.at_step) + "," +
           (s.at_step ? format_metric_value(s.at_value) : "") + "\n";
  }
  return out;
}

void export_run_metrics(TrackingReader& reader, int64_t run, const std::string& format, std::ostream& out) {
  if (format != "csv" && format != "jsonl")
    throw TrackingError("unknown export format '" + format + "' (use csv or jsonl)");
  if (!reader.run(run)) throw TrackingError("no run " + std::to_string(run) + " in " + reader.path());
  if (format == "csv") out << "run_id,key,step,value,wall_time\n";
  for (const MetricPoint& p : reader.metrics(run)) {
    if (format == "csv") {
      out << run << "," << csv_cell(p.key) << "," << p.step << "," << format_metric_value(p.value) << ","
          << format_metric_value(p.wall_time) << "\n";
    } else {
      nlohmann::ordered_json line = {
          {"run_id", run},
          {"key", p.key},
          {"step", p.step},
          {"value", std::isfinite(p.value) ? nlohmann::ordered_json(p.value) : nlohmann::ordered_json()},
          {"wall_time", p.wall_time}};
      out << line.dump() << "\n";
    }
  }
}

}  // namespace rlwb::core
