// The tracking database: one SQLite file per workspace (default
// runs/rlwb.db), WAL mode, one writer (the controller) that batches its
// writes into transactions, any number of readers (CLI, GUI) polling by
// rowid. Tables: schema_version, runs, params, metrics, events, artifacts,
// samples, profiles (see docs/ARCHITECTURE.md). No LibTorch here.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

class TrackingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RunInfo {
  int64_t id = 0;
  std::string name, experiment_file, experiment_text, algorithm, status, host;
  int64_t seed = 0;
  double start_time = 0, end_time = 0;  // unix seconds; end 0 while running
  int64_t last_step = -1;
};

struct MetricPoint {
  int64_t rowid = 0;
  std::string key;
  int64_t step = 0;
  double value = 0, wall_time = 0;
};

struct EventRecord {
  int64_t rowid = 0;
  double time = 0;
  std::string level, source, text;
};

// The single writer. Metric/event/sample writes are queued and committed in
// one transaction every `flush_interval_ms` or on flush(); status changes
// commit at once. Thread-safe.
class TrackingWriter {
 public:
  explicit TrackingWriter(const std::string& db_path, int flush_interval_ms = 200);
  ~TrackingWriter();  // flushes

  int64_t start_run(const std::string& name, const std::string& experiment_file,
                    const std::string& experiment_text, const std::string& algorithm,
                    int64_t seed, const nlohmann::json& params /* flattened on write */);
  void log_metric(int64_t run, const std::string& key, int64_t step, double value);
  void log_event(int64_t run, const std::string& level, const std::string& source,
                 const std::string& text);
  void log_sample(int64_t run, int64_t step, const std::string& prompt,
                  const std::string& response, double reward, const nlohmann::json& details);
  void log_artifact(int64_t run, const std::string& kind, const std::string& path);
  // status: "running", "finished", "failed", "interrupted".
  void end_run(int64_t run, const std::string& status);
  void flush();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Read-only access (opens the file read-only; never blocks the writer).
class TrackingReader {
 public:
  explicit TrackingReader(const std::string& db_path);
  ~TrackingReader();
  std::vector<RunInfo> list_runs();
  std::optional<RunInfo> run(int64_t id);
  std::vector<std::pair<std::string, std::string>> params(int64_t run);
  std::vector<std::string> metric_keys(int64_t run);
  // Points with rowid > after_rowid (for polling), optionally one key.
  std::vector<MetricPoint> metrics(int64_t run, int64_t after_rowid = 0,
                                   const std::string& key = "");
  std::vector<EventRecord> events(int64_t run, int64_t after_rowid = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CLI's `rlwb runs list` / `rlwb runs show ID` text.
std::string format_runs_table(const std::vector<RunInfo>& runs);
std::string format_run_details(TrackingReader& reader, int64_t run);

}  // namespace rlwb::core
