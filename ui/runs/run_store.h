// What the GUI knows about the tracking DB, kept fresh by a background
// poller so that frames never wait on SQLite. The poller lists runs, reads
// params/tags/best score once per run (again after an edit), and, for the
// runs a view is watching, the metrics, events and samples past the last
// rowid it has seen (polling by rowid, docs/tracking.md). The UI thread
// takes what was fetched once per frame (update()) and owns everything it
// reads, so drawing needs no lock.
//
// The GUI writes only through TrackingAdmin (rename, tag, delete), and
// refuses to for a run that is still running.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/tracking/tracking.h"

namespace rlwb::ui {

struct FetchedRuns;  // what one poll read (run_store.cpp)

// One metric of one run, in step order.
struct MetricSeries {
  std::vector<double> step, wall, value;  // wall: seconds since the run started
  uint64_t version = 0;                   // bumped on every append

  // EMA of `value` for `weight`, recomputed when the data or weight change.
  const std::vector<double>& smoothed(double weight);

 private:
  std::vector<double> smooth_;
  double smooth_weight_ = -1;
  uint64_t smooth_version_ = UINT64_MAX;
};

struct RunData {
  core::RunInfo info;
  std::vector<std::pair<std::string, std::string>> params, tags;
  std::optional<double> best_score;  // highest critic/score/mean
  std::map<std::string, MetricSeries> metrics;
  std::vector<core::EventRecord> events;
  std::vector<core::SampleRecord> samples;
  uint64_t points = 0;          // metric points received
  bool metrics_loaded = false;  // the first read of a watched run has arrived
  uint64_t version = 0;         // bumped when anything of this run changes
};

class RunStore {
 public:
  RunStore();
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  // Starts polling `db_path` (missing or locked files are retried).
  void open(const std::string& db_path, int poll_ms = 250);
  const std::string& db_path() const { return db_path_; }
  void close();

  // UI thread, once a frame: applies what the poller fetched.
  void update();

  const std::vector<int64_t>& run_ids() const { return order_; }  // newest first
  RunData* run(int64_t id);
  const std::map<int64_t, RunData>& all() const { return runs_; }
  // The runs whose metrics, events and samples are polled.
  void watch(const std::set<int64_t>& ids);
  bool loading(int64_t id) const;  // watched, first read not arrived yet
  std::string error() const;       // why the DB cannot be read right now ("" when fine)
  bool connected() const;
  // The UI holds what the DB held: a poll has been applied (or the DB cannot
  // be read, see error()) and every watched run that exists has had its
  // first read. Headless `--frames N` waits for this before counting.
  bool settled() const;
  uint64_t list_version() const { return list_version_; }

  // Maintenance through TrackingAdmin; false with `error` set when refused.
  bool rename_run(int64_t id, const std::string& name, std::string& error);
  bool set_tag(int64_t id, const std::string& key, const std::string& value, std::string& error);
  bool remove_tag(int64_t id, const std::string& key, std::string& error);
  bool delete_runs(const std::vector<int64_t>& ids, std::string& error);
  void refresh();  // poll again now

 private:
  void poll_loop();
  bool writable(int64_t id, std::string& error);
  // Applies an admin change to a finished run, then re-reads the runs
  // (and, when `details_change`, that run's details). False with `error`.
  bool change_run(int64_t id, bool details_change, const std::function<void(core::TrackingAdmin&)>& change,
                  std::string& error);

  std::string db_path_;
  int poll_ms_ = 250;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool refresh_all_ = false;

  // Shared with the poller (under mu_).
  std::unique_ptr<FetchedRuns> pending_;
  std::set<int64_t> watched_;
  std::set<int64_t> stale_details_;  // runs whose params/tags must be read again
  std::string error_;
  bool connected_ = false;

  // UI thread only.
  bool applied_ = false;  // update() has taken at least one poll
  std::map<int64_t, RunData> runs_;
  std::vector<int64_t> order_;
  uint64_t list_version_ = 0;
};

}  // namespace rlwb::ui
