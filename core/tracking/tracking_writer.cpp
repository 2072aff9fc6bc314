// TrackingWriter: the controller's single connection to the tracking DB.
// Log calls only append to an in-memory queue (the training loop never waits
// on the disk); a background thread commits the queue in one transaction
// every flush interval, or sooner when it reaches kBatchRows. Run start/end
// and artifacts commit at once, after the queue, so rowid order is log order.
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/tracking/process_identity.h"
#include "core/tracking/run_end.h"
#include "core/tracking/schema.h"
#include "core/tracking/time_now.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

constexpr size_t kBatchRows = 4096;        // wake the flusher early
constexpr size_t kMaxQueuedRows = 100000;  // past this the logging thread commits itself

struct MetricRow {
  int64_t run, step;
  std::string key;
  double value, wall_time;
};
struct EventRow {
  int64_t run;
  double time;
  std::string level, source, text;
};
struct SampleRow {
  int64_t run, step;
  std::string prompt, response;
  double reward;
  std::string details;
};
struct ArtifactRow {
  int64_t run;
  std::string kind, path;
  double time;
};
struct ProfileRow {
  int64_t run, step;
  std::string node, kind, data;
};

// Rows waiting for the next commit.
struct PendingRows {
  std::vector<MetricRow> metrics;
  std::vector<EventRow> events;
  std::vector<SampleRow> samples;
  std::vector<ArtifactRow> artifacts;
  std::vector<ProfileRow> profiles;

  size_t size() const {
    return metrics.size() + events.size() + samples.size() + artifacts.size() + profiles.size();
  }
  // Puts rows whose commit failed back in front of the newer ones.
  void put_back_before(PendingRows&& newer) {
    const auto append = [](auto& into, auto& from) {
      into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
    };
    append(metrics, newer.metrics);
    append(events, newer.events);
    append(samples, newer.samples);
    append(artifacts, newer.artifacts);
    append(profiles, newer.profiles);
  }
};

void commit_rows(SQLite::Database& db, const PendingRows& rows) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  if (!rows.metrics.empty()) {
    SQLite::Statement insert(
        db, "INSERT INTO metrics (run_id, key, step, value, wall_time) VALUES (?, ?, ?, ?, ?)");
    std::map<int64_t, int64_t> last_step_of_run;
    for (const MetricRow& row : rows.metrics) {
      insert.bind(1, row.run);
      insert.bindNoCopy(2, row.key);
      insert.bind(3, row.step);
      if (std::isnan(row.value)) {
        insert.bind(4);  // SQLite has no NaN; NULL reads back as NaN
      } else {
        insert.bind(4, row.value);
      }
      insert.bind(5, row.wall_time);
      insert.exec();
      insert.reset();
      if (!is_training_step_metric(row.key)) continue;
      auto [it, added] = last_step_of_run.emplace(row.run, row.step);
      if (!added) it->second = std::max(it->second, row.step);
    }
    SQLite::Statement update(db, "UPDATE runs SET last_step = max(last_step, ?) WHERE id = ?");
    for (const auto& [run, step] : last_step_of_run) {
      update.bind(1, step);
      update.bind(2, run);
      update.exec();
      update.reset();
    }
  }
  if (!rows.events.empty()) {
    SQLite::Statement insert(db,
                             "INSERT INTO events (run_id, time, level, source, text) VALUES (?, ?, ?, ?, ?)");
    for (const EventRow& row : rows.events) {
      insert.bind(1, row.run);
      insert.bind(2, row.time);
      insert.bindNoCopy(3, row.level);
      insert.bindNoCopy(4, row.source);
      insert.bindNoCopy(5, row.text);
      insert.exec();
      insert.reset();
    }
  }
  if (!rows.samples.empty()) {
    SQLite::Statement insert(db,
                             "INSERT INTO samples (run_id, step, prompt, response, reward, details) "
                             "VALUES (?, ?, ?, ?, ?, ?)");
    for (const SampleRow& row : rows.samples) {
      insert.bind(1, row.run);
      insert.bind(2, row.step);
      insert.bindNoCopy(3, row.prompt);
      insert.bindNoCopy(4, row.response);
      if (std::isnan(row.reward)) {
        insert.bind(5);
      } else {
        insert.bind(5, row.reward);
      }
      insert.bindNoCopy(6, row.details);
      insert.exec();
      insert.reset();
    }
  }
  if (!rows.artifacts.empty()) {
    SQLite::Statement insert(db, "INSERT INTO artifacts (run_id, kind, path, time) VALUES (?, ?, ?, ?)");
    for (const ArtifactRow& row : rows.artifacts) {
      insert.bind(1, row.run);
      insert.bindNoCopy(2, row.kind);
      insert.bindNoCopy(3, row.path);
      insert.bind(4, row.time);
      insert.exec();
      insert.reset();
    }
  }
  if (!rows.profiles.empty()) {
    SQLite::Statement insert(db,
                             "INSERT INTO profiles (run_id, step, node, kind, data) VALUES (?, ?, ?, ?, ?)");
    for (const ProfileRow& row : rows.profiles) {
      insert.bind(1, row.run);
      insert.bind(2, row.step);
      insert.bindNoCopy(3, row.node);
      insert.bindNoCopy(4, row.kind);
      insert.bindNoCopy(5, row.data);
      insert.exec();
      insert.reset();
    }
  }
  transaction.commit();
}

void require_event_level(const std::string& level) {
  static const std::set<std::string> kLevels = {"debug", "info", "warning", "error"};
  if (!kLevels.count(level)) {
    throw TrackingError("event level '" + level + "' is not one of debug, info, warning, error");
  }
}

}  // namespace

bool is_training_step_metric(const std::string& key) {
  return key.rfind("warm_start/", 0) != 0 && key.rfind("val/", 0) != 0;
}

struct TrackingWriter::Impl {
  std::string path;
  std::chrono::milliseconds interval;

  std::mutex db_mutex;  // one commit at a time, in queue order
  SQLite::Database db;

  std::mutex queue_mutex;  // guards everything below
  std::condition_variable wake_flusher;
  PendingRows pending;
  std::set<int64_t> known_runs;
  std::string background_error;
  bool stopping = false;

  std::thread flusher;

  Impl(const std::string& db_path, int flush_interval_ms)
      : path(db_path),
        interval(flush_interval_ms),
        db(open_tracking_db_for_writing(db_path)),
        flusher([this] { flusher_loop(); }) {}

  [[noreturn]] void throw_db_error(const std::exception& e, const std::string& doing) {
    throw TrackingError(path + ": " + doing + " failed: " + e.what());
  }

  // Commits the queue. Caller holds db_mutex. On failure the rows go back to
  // the front of the queue, to be retried by the next flush.
  void flush_locked() {
    PendingRows rows;
    {
      std::lock_guard lock(queue_mutex);
      std::swap(rows, pending);
    }
    if (rows.size() == 0) return;
    try {
      commit_rows(db, rows);
    } catch (const std::exception& e) {
      std::lock_guard lock(queue_mutex);
      rows.put_back_before(std::move(pending));
      pending = std::move(rows);
      throw_db_error(e, "committing logged rows (kept for the next flush)");
    }
  }

  void flush() {
    std::lock_guard db_lock(db_mutex);
    flush_locked();
    std::lock_guard lock(queue_mutex);
    background_error.clear();  // everything queued so far is now on disk
  }

  void flusher_loop() {
    std::unique_lock lock(queue_mutex);
    while (!stopping) {
      wake_flusher.wait_for(lock, interval, [this] { return stopping || pending.size() >= kBatchRows; });
      if (stopping) break;
      lock.unlock();
      bool failed = false;
      try {
        std::lock_guard db_lock(db_mutex);
        flush_locked();
      } catch (const std::exception& e) {
        failed = true;
        lock.lock();
        background_error = e.what();
        lock.unlock();
      }
      lock.lock();
      if (failed) wake_flusher.wait_for(lock, interval, [this] { return stopping; });
    }
  }

  // Appends rows to the queue; reports a failed background commit once.
  template <class AddRows>
  void enqueue(AddRows add_rows) {
    std::string error;
    size_t queued = 0;
    {
      std::lock_guard lock(queue_mutex);
      add_rows(pending);
      queued = pending.size();
      std::swap(error, background_error);
    }
    if (queued >= kMaxQueuedRows) {
      flush();  // the disk cannot keep up: slow the producer down
    } else if (queued >= kBatchRows) {
      wake_flusher.notify_one();
    }
    if (!error.empty()) throw TrackingError(error);
  }

  void require_run(int64_t run) {
    {
      std::lock_guard lock(queue_mutex);
      if (known_runs.count(run)) return;
    }
    bool exists = false;
    {
      std::lock_guard db_lock(db_mutex);
      try {
        SQLite::Statement query(db, "SELECT 1 FROM runs WHERE id = ?");
        query.bind(1, run);
        exists = query.executeStep();
      } catch (const std::exception& e) {
        throw_db_error(e, "looking up run " + std::to_string(run));
      }
    }
    if (!exists) {
      throw TrackingError(path + ": there is no run " + std::to_string(run) +
                          " (start_run returns the id to log to)");
    }
    std::lock_guard lock(queue_mutex);
    known_runs.insert(run);
  }

  ~Impl() {
    {
      std::lock_guard lock(queue_mutex);
      stopping = true;
    }
    wake_flusher.notify_one();
    flusher.join();
    try {
      flush();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rlwb tracking: the last rows were not saved: %s\n", e.what());
    }
  }
};

TrackingWriter::TrackingWriter(const std::string& db_path, int flush_interval_ms) {
  if (flush_interval_ms <= 0) {
    throw TrackingError("tracking flush interval must be positive, got " + std::to_string(flush_interval_ms) +
                        " ms");
  }
  impl_ = std::make_unique<Impl>(db_path, flush_interval_ms);
}

TrackingWriter::~TrackingWriter() = default;

int64_t TrackingWriter::start_run(const std::string& name, const std::string& experiment_file,
                                  const std::string& experiment_text, const std::string& algorithm,
                                  int64_t seed, const nlohmann::json& params, int64_t from_run) {
  if (name.empty()) throw TrackingError("a run needs a name");
  const auto flat_params = flatten_params(params);
  const ProcessIdentity owner = current_process_identity();
  int64_t run = 0;
  {
    std::lock_guard db_lock(impl_->db_mutex);
    impl_->flush_locked();
    try {
      SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
      SQLite::Statement insert(
          impl_->db,
          "INSERT INTO runs (name, experiment_file, experiment_text, algorithm, status, host, "
          "seed, start_time, pid, process_start, from_run) VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?)");
      insert.bind(1, name);
      insert.bind(2, experiment_file);
      insert.bind(3, experiment_text);
      insert.bind(4, algorithm);
      insert.bind(5, owner.host);
      insert.bind(6, seed);
      insert.bind(7, unix_time_now());
      insert.bind(8, owner.pid);
      insert.bind(9, owner.start);
      insert.bind(10, from_run);
      insert.exec();
      run = impl_->db.getLastInsertRowid();
      SQLite::Statement insert_param(impl_->db, "INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)");
      for (const auto& [key, value] : flat_params) {
        insert_param.bind(1, run);
        insert_param.bindNoCopy(2, key);
        insert_param.bindNoCopy(3, value);
        insert_param.exec();
        insert_param.reset();
      }
      transaction.commit();
    } catch (const SQLite::Exception& e) {
      impl_->throw_db_error(e, "starting run '" + name + "'");
    }
  }
  std::lock_guard lock(impl_->queue_mutex);
  impl_->known_runs.insert(run);
  return run;
}

void TrackingWriter::log_metric(int64_t run, const std::string& key, int64_t step, double value) {
  if (key.empty()) throw TrackingError("a metric needs a key");
  if (step < 0) {
    throw TrackingError("metric '" + key + "': step must be >= 0, got " + std::to_string(step));
  }
  impl_->require_run(run);
  const double wall_time = unix_time_now();
  impl_->enqueue([&](PendingRows& rows) { rows.metrics.push_back({run, step, key, value, wall_time}); });
}

void TrackingWriter::log_event(int64_t run, const std::string& level, const std::string& source,
                               const std::string& text) {
  require_event_level(level);
  impl_->require_run(run);
  const double time = unix_time_now();
  impl_->enqueue([&](PendingRows& rows) { rows.events.push_back({run, time, level, source, text}); });
}

void TrackingWriter::log_sample(int64_t run, int64_t step, const std::string& prompt,
                                const std::string& response, double reward, const nlohmann::json& details) {
  impl_->require_run(run);
  std::string details_text =
      details.is_null() ? "{}" : details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  impl_->enqueue([&](PendingRows& rows) {
    rows.samples.push_back({run, step, prompt, response, reward, std::move(details_text)});
  });
}

void TrackingWriter::log_artifact(int64_t run, const std::string& kind, const std::string& path) {
  impl_->require_run(run);
  const double time = unix_time_now();
  impl_->enqueue([&](PendingRows& rows) { rows.artifacts.push_back({run, kind, path, time}); });
  impl_->flush();  // a checkpoint on disk must not outlive its record
}

void TrackingWriter::log_profile(int64_t run, int64_t step, const std::string& node, const std::string& kind,
                                 const std::string& data) {
  impl_->require_run(run);
  impl_->enqueue([&](PendingRows& rows) { rows.profiles.push_back({run, step, node, kind, data}); });
}

void TrackingWriter::end_run(int64_t run, const std::string& status, const std::string& error) {
  require_end_status(status);
  impl_->require_run(run);
  std::lock_guard db_lock(impl_->db_mutex);
  impl_->flush_locked();
  try {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    record_run_end(impl_->db, run, status, error, "controller");
    transaction.commit();
  } catch (const SQLite::Exception& e) {
    impl_->throw_db_error(e, "ending run " + std::to_string(run));
  }
}

void TrackingWriter::flush() { impl_->flush(); }

std::pair<int64_t, int64_t> TrackingWriter::resume_run(int64_t run, int64_t step,
                                                       const std::string& checkpoint) {
  impl_->require_run(run);
  const ProcessIdentity owner = current_process_identity();
  std::lock_guard db_lock(impl_->db_mutex);
  impl_->flush_locked();
  std::pair<int64_t, int64_t> superseded{0, 0};
  try {
    SQLite::Transaction transaction(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    // From the start (no checkpoint): every row, the warm start's and step 0's too.
    const bool from_start = checkpoint.empty();
    SQLite::Statement metrics(impl_->db,
                              std::string("UPDATE metrics SET superseded = 1 WHERE run_id = ? AND "
                                          "step > ? AND superseded = 0") +
                                  (from_start ? "" : " AND key NOT LIKE 'warm\\_start/%' ESCAPE '\\'"));
    metrics.bind(1, run);
    metrics.bind(2, from_start ? int64_t{-1} : step);
    superseded.first = metrics.exec();
    SQLite::Statement samples(
        impl_->db, "UPDATE samples SET superseded = 1 WHERE run_id = ? AND step > ? AND superseded = 0");
    samples.bind(1, run);
    samples.bind(2, from_start ? int64_t{-1} : step);
    superseded.second = samples.exec();
    SQLite::Statement update(impl_->db,
                             "UPDATE runs SET status = 'running', end_time = NULL, last_step = ?, host = ?, "
                             "pid = ?, process_start = ? WHERE id = ?");
    update.bind(1, step);
    update.bind(2, owner.host);
    update.bind(3, owner.pid);
    update.bind(4, owner.start);
    update.bind(5, run);
    update.exec();
    SQLite::Statement event(impl_->db,
                            "INSERT INTO events (run_id, time, level, source, text) VALUES (?, ?, 'info', "
                            "'controller', ?)");
    event.bind(1, run);
    event.bind(2, unix_time_now());
    event.bind(3, (from_start ? std::string("started over (no checkpoint yet); ")
                              : "resumed from the checkpoint of step " + std::to_string(step) + " (" +
                                    checkpoint + "); ") +
                      std::to_string(superseded.first) + " metric and " + std::to_string(superseded.second) +
                      " sample rows of the earlier attempt" + (from_start ? "" : " after it") +
                      " marked superseded");
    event.exec();
    transaction.commit();
  } catch (const SQLite::Exception& e) {
    impl_->throw_db_error(e, "resuming run " + std::to_string(run));
  }
  return superseded;
}

}  // namespace rlwb::core
