// The tracking database: one SQLite file per workspace (default
// runs/rlwb.db), WAL mode, one writer (the controller) that batches its
// writes into transactions, any number of readers (CLI, GUI) polling by
// rowid. Tables: schema_version, runs, params, metrics, events, artifacts,
// samples, profiles, tags (docs/tracking.md has the columns). No LibTorch here.
//
// Who uses what:
//   controller  TrackingWriter (one per process; start_run .. end_run)
//   CLI, GUI    TrackingReader (read-only, never blocks the writer),
//               TrackingAdmin (rename, tag, delete, mark dead runs),
//               format_runs_table / format_run_details (`rlwb runs ...`)
//
// Contract:
// - Opening a file that is not an RLWB database (or not SQLite) throws
//   TrackingError and leaves the file untouched. Opening a database made by
//   a newer RLWB throws (upgrade RLWB). The writer and TrackingAdmin migrate
//   an older database in one transaction; the reader only accepts the
//   current version.
// - Every lock wait is bounded (busy timeout 5 s); a wait past it throws.
// - A metric logged before a process crash is on disk once flush_interval_ms
//   has passed (or after flush()/end_run()); commits are fsynced.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace rlwb::core {

class TrackingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The metric a run's score is: RunInfo::last_score, the SCORE column.
inline constexpr const char* kRunScoreMetric = "critic/score/mean";

// Whether a metric's step is a training step, and so may raise
// RunInfo::last_step. Not under warm_start/ (the supervised steps before RL,
// counted apart) nor val/ (the held-out evaluation, logged at the training
// step it follows, or at 0 before the first).
bool is_training_step_metric(const std::string& key);

struct RunInfo {
  int64_t id = 0;
  std::string name, experiment_file, experiment_text, algorithm, status, host;
  int64_t seed = 0;
  double start_time = 0, end_time = 0;  // unix seconds; end 0 while running
  // Highest step logged for a training-step metric (is_training_step_metric);
  // -1 before the first. (Databases written before this rule keep the
  // highest step of any metric for their runs.)
  int64_t last_step = -1;
  int64_t pid = 0;                   // the controller process that ran it
  int64_t from_run = 0;              // the run it was relaunched from (rlwb run --from-run); 0: none
  std::optional<double> last_score;  // last kRunScoreMetric, if logged
};

struct MetricPoint {
  int64_t rowid = 0;
  std::string key;
  int64_t step = 0;
  double value = 0, wall_time = 0;  // value NaN round-trips (stored as NULL)
};

struct EventRecord {
  int64_t rowid = 0;
  double time = 0;
  std::string level, source, text;
};

struct SampleRecord {
  int64_t rowid = 0;
  int64_t step = 0;
  std::string prompt, response;
  double reward = 0;
  nlohmann::json details;
};

struct ArtifactRecord {
  int64_t rowid = 0;
  std::string kind, path;
  double time = 0;
};

struct ProfileRecord {
  int64_t rowid = 0;
  int64_t step = 0;
  std::string node, kind, data;
};

// One metric key of one run over all its steps (NaN values are not counted).
struct MetricSummary {
  std::string key;
  int64_t count = 0;
  double mean = 0, min = 0, max = 0, sum = 0;
  int64_t last_step = 0;
  double last_value = 0;  // the value at last_step
};

// Nested JSON -> dotted keys: {"trainer":{"steps":3,"gpus":[0,1]}} gives
// trainer.steps=3, trainer.gpus.0=0, trainer.gpus.1=1. Strings are stored
// without quotes, other scalars as JSON text, empty objects/lists as {} / [].
// Throws TrackingError if `config` is not an object, a list or null.
std::vector<std::pair<std::string, std::string>> flatten_params(const nlohmann::json& config);

// The single writer. Metric/event/sample/profile writes are queued and
// committed in one transaction every `flush_interval_ms` (by a background
// thread), when the queue holds 4096 rows, or on flush(); start_run, end_run
// and log_artifact commit at once. Thread-safe. A failed background commit
// keeps its rows queued for the next flush and is thrown, once, as
// TrackingError from the next call.
class TrackingWriter {
 public:
  explicit TrackingWriter(const std::string& db_path, int flush_interval_ms = 200);
  ~TrackingWriter();  // flushes

  int64_t start_run(const std::string& name, const std::string& experiment_file,
                    const std::string& experiment_text, const std::string& algorithm, int64_t seed,
                    const nlohmann::json& params /* flattened on write */, int64_t from_run = 0);
  void log_metric(int64_t run, const std::string& key, int64_t step, double value);
  // level: "debug", "info", "warning" or "error".
  void log_event(int64_t run, const std::string& level, const std::string& source, const std::string& text);
  void log_sample(int64_t run, int64_t step, const std::string& prompt, const std::string& response,
                  double reward, const nlohmann::json& details);
  void log_artifact(int64_t run, const std::string& kind, const std::string& path);
  // For the profiler: `data` is opaque text (JSON by convention).
  void log_profile(int64_t run, int64_t step, const std::string& node, const std::string& kind,
                   const std::string& data);
  // status: "finished", "failed" or "interrupted". A non-empty `error` is
  // committed with it as an "error" event from source "controller".
  void end_run(int64_t run, const std::string& status, const std::string& error = "");
  void flush();
  // Continues `run` (rlwb run --resume) from its checkpoint of `step`: in one
  // transaction, marks superseded the rows an earlier attempt wrote after
  // that checkpoint (training-step and val/ metrics and samples of later
  // steps; warm_start/ metrics come before any checkpoint), sets the run
  // 'running' again under this process with last_step = `step`, and adds
  // an event. Returns the number of metric and sample rows superseded.
  // An empty `checkpoint` is a start over (on_worker_failure restart before
  // the first checkpoint): every row is superseded, the warm start's too.
  std::pair<int64_t, int64_t> resume_run(int64_t run, int64_t step, const std::string& checkpoint);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Read-only access (opens the file read-only; never blocks the writer). Each
// call reads the latest committed data. Thread-safe (calls are serialized).
class TrackingReader {
 public:
  explicit TrackingReader(const std::string& db_path);
  ~TrackingReader();
  std::vector<RunInfo> list_runs();  // newest first
  std::optional<RunInfo> run(int64_t id);
  std::vector<std::pair<std::string, std::string>> params(int64_t run);
  std::vector<std::pair<std::string, std::string>> tags(int64_t run);
  std::vector<std::string> metric_keys(int64_t run);
  // Points with rowid > after_rowid (for polling), optionally one key, in
  // rowid order. Rowids only grow, so the last rowid seen is the next cursor.
  // Rows marked superseded (TrackingWriter::resume_run) are left out here
  // and in every other read of metrics and samples.
  std::vector<MetricPoint> metrics(int64_t run, int64_t after_rowid = 0, const std::string& key = "");
  std::vector<MetricSummary> metric_summaries(int64_t run);  // by key
  std::vector<EventRecord> events(int64_t run, int64_t after_rowid = 0);
  std::vector<EventRecord> last_events(int64_t run, int count);  // oldest first
  std::vector<SampleRecord> samples(int64_t run, int64_t after_rowid = 0);
  std::vector<ArtifactRecord> artifacts(int64_t run);
  std::vector<ProfileRecord> profiles(int64_t run, int64_t after_rowid = 0);
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Maintenance from the CLI/GUI, next to a live writer: each call is one
// short transaction. Opening migrates an older database, like the writer.
class TrackingAdmin {
 public:
  explicit TrackingAdmin(const std::string& db_path);
  ~TrackingAdmin();
  void rename_run(int64_t run, const std::string& name);
  void set_tag(int64_t run, const std::string& key, const std::string& value);
  void remove_tag(int64_t run, const std::string& key);
  // Deletes the run and all its rows (params, metrics, events, ...) at once.
  void delete_run(int64_t run);
  // Ends a run whose controller is gone: sets status ("failed" or
  // "interrupted") and end time, and records `error` as an "error" event.
  // Throws if the run is not 'running'.
  void mark_run_ended(int64_t run, const std::string& status, const std::string& error);
  // Every 'running' run of this host whose controller process is dead (or
  // whose pid now belongs to another process) is marked with `status` and an
  // event naming the dead process. Runs of other hosts are left alone.
  // Returns the ids marked.
  std::vector<int64_t> mark_stale_runs(const std::string& status = "failed");

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The CLI's `rlwb runs list` / `rlwb runs show ID` text: aligned columns.
std::string format_runs_table(const std::vector<RunInfo>& runs);
std::string format_run_details(TrackingReader& reader, int64_t run);

}  // namespace rlwb::core
