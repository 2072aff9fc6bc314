// TrackingReader: read-only queries for the CLI and GUI. Each call is one
// short read transaction on a WAL snapshot, so it sees every committed batch
// and never holds up the writer. Polling calls return rows after a rowid.
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <limits>
#include <mutex>

#include "core/tracking/schema.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// SQLite stores NaN as NULL.
double real_or_nan(const SQLite::Column& column) { return column.isNull() ? kNaN : column.getDouble(); }

// "SELECT <the columns read_run reads> FROM runs".
std::string select_runs() {
  return std::string(
             "SELECT id, name, experiment_file, experiment_text, algorithm, status, host, seed, "
             "start_time, end_time, last_step, pid, from_run, "
             // The score of the last step; 'NaN' text keeps a NaN apart from no score.
             "(SELECT coalesce(value, 'NaN') FROM metrics m WHERE m.run_id = runs.id AND m.superseded = 0 "
             "AND m.key = '") +
         kRunScoreMetric + "' ORDER BY step DESC, m.rowid DESC LIMIT 1) FROM runs";
}

RunInfo read_run(SQLite::Statement& query) {
  RunInfo run;
  run.id = query.getColumn(0).getInt64();
  run.name = query.getColumn(1).getString();
  run.experiment_file = query.getColumn(2).getString();
  run.experiment_text = query.getColumn(3).getString();
  run.algorithm = query.getColumn(4).getString();
  run.status = query.getColumn(5).getString();
  run.host = query.getColumn(6).getString();
  run.seed = query.getColumn(7).getInt64();
  run.start_time = query.getColumn(8).getDouble();
  run.end_time = query.getColumn(9).isNull() ? 0 : query.getColumn(9).getDouble();
  run.last_step = query.getColumn(10).getInt64();
  run.pid = query.getColumn(11).getInt64();
  run.from_run = query.getColumn(12).getInt64();
  const SQLite::Column score = query.getColumn(13);
  if (score.isText()) {
    run.last_score = kNaN;
  } else if (!score.isNull()) {
    run.last_score = score.getDouble();
  }
  return run;
}

std::vector<EventRecord> read_events(SQLite::Statement& query) {
  std::vector<EventRecord> events;
  while (query.executeStep()) {
    events.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getDouble(),
                      query.getColumn(2).getString(), query.getColumn(3).getString(),
                      query.getColumn(4).getString()});
  }
  return events;
}

std::vector<std::pair<std::string, std::string>> read_pairs(SQLite::Statement& query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  while (query.executeStep()) {
    pairs.emplace_back(query.getColumn(0).getString(), query.getColumn(1).getString());
  }
  return pairs;
}

}  // namespace

struct TrackingReader::Impl {
  std::string path;
  std::mutex mutex;  // SQLite statements are not shared across threads
  SQLite::Database db;

  explicit Impl(const std::string& db_path) : path(db_path), db(open_tracking_db_for_reading(db_path)) {}

  // Runs one query under the lock; SQLite errors become TrackingErrors.
  template <class Query>
  auto read(const char* what, Query query) {
    std::lock_guard lock(mutex);
    try {
      return query(db);
    } catch (const SQLite::Exception& e) {
      throw TrackingError(path + ": reading " + what + " failed: " + e.what());
    }
  }
};

TrackingReader::TrackingReader(const std::string& db_path) : impl_(std::make_unique<Impl>(db_path)) {}

TrackingReader::~TrackingReader() = default;

const std::string& TrackingReader::path() const { return impl_->path; }

std::vector<RunInfo> TrackingReader::list_runs() {
  return impl_->read("runs", [](SQLite::Database& db) {
    SQLite::Statement query(db, select_runs() + " ORDER BY id DESC");
    std::vector<RunInfo> runs;
    while (query.executeStep()) runs.push_back(read_run(query));
    return runs;
  });
}

std::optional<RunInfo> TrackingReader::run(int64_t id) {
  return impl_->read("a run", [id](SQLite::Database& db) -> std::optional<RunInfo> {
    SQLite::Statement query(db, select_runs() + " WHERE id = ?");
    query.bind(1, id);
    if (!query.executeStep()) return std::nullopt;
    return read_run(query);
  });
}

std::vector<std::pair<std::string, std::string>> TrackingReader::params(int64_t run) {
  return impl_->read("params", [run](SQLite::Database& db) {
    SQLite::Statement query(db, "SELECT key, value FROM params WHERE run_id = ? ORDER BY key");
    query.bind(1, run);
    return read_pairs(query);
  });
}

std::vector<std::pair<std::string, std::string>> TrackingReader::tags(int64_t run) {
  return impl_->read("tags", [run](SQLite::Database& db) {
    SQLite::Statement query(db, "SELECT key, value FROM tags WHERE run_id = ? ORDER BY key");
    query.bind(1, run);
    return read_pairs(query);
  });
}

std::vector<std::string> TrackingReader::metric_keys(int64_t run) {
  return impl_->read("metric keys", [run](SQLite::Database& db) {
    // Hops from key to next key through the (run_id, key, step) index: cost
    // grows with the number of keys, not of points (DISTINCT reads them all).
    SQLite::Statement query(db,
                            "WITH RECURSIVE keys(key) AS ("
                            "  SELECT min(key) FROM metrics WHERE run_id = ?1"
                            "  UNION ALL"
                            "  SELECT (SELECT min(key) FROM metrics WHERE run_id = ?1 AND key > keys.key)"
                            "  FROM keys WHERE keys.key IS NOT NULL) "
                            "SELECT key FROM keys WHERE key IS NOT NULL");
    query.bind(1, run);
    std::vector<std::string> keys;
    while (query.executeStep()) keys.push_back(query.getColumn(0).getString());
    return keys;
  });
}

std::vector<MetricPoint> TrackingReader::metrics(int64_t run, int64_t after_rowid, const std::string& key) {
  return impl_->read("metrics", [&](SQLite::Database& db) {
    SQLite::Statement query(db, key.empty()
                                    ? "SELECT rowid, key, step, value, wall_time FROM metrics "
                                      "WHERE run_id = ? AND rowid > ? AND superseded = 0 ORDER BY rowid"
                                    : "SELECT rowid, key, step, value, wall_time FROM metrics "
                                      "WHERE run_id = ? AND rowid > ? AND key = ? AND superseded = 0 "
                                      "ORDER BY rowid");
    query.bind(1, run);
    query.bind(2, after_rowid);
    if (!key.empty()) query.bind(3, key);
    std::vector<MetricPoint> points;
    while (query.executeStep()) {
      points.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(),
                        query.getColumn(2).getInt64(), real_or_nan(query.getColumn(3)),
                        query.getColumn(4).getDouble()});
    }
    return points;
  });
}

std::vector<MetricSummary> TrackingReader::metric_summaries(int64_t run) {
  return impl_->read("metric summaries", [run](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT s.key, s.n, s.mean, s.lo, s.hi, s.total, s.last_step,"
                            " (SELECT value FROM metrics m WHERE m.run_id = ?1 AND m.key = s.key"
                            "  AND m.step = s.last_step AND m.superseded = 0 ORDER BY m.rowid DESC LIMIT 1) "
                            "FROM (SELECT key, count(value) AS n, avg(value) AS mean, min(value) AS lo,"
                            "  max(value) AS hi, total(value) AS total, max(step) AS last_step"
                            "  FROM metrics WHERE run_id = ?1 AND superseded = 0 GROUP BY key) AS s "
                            "ORDER BY s.key");
    query.bind(1, run);
    std::vector<MetricSummary> summaries;
    while (query.executeStep()) {
      MetricSummary summary;
      summary.key = query.getColumn(0).getString();
      summary.count = query.getColumn(1).getInt64();
      summary.mean = real_or_nan(query.getColumn(2));
      summary.min = real_or_nan(query.getColumn(3));
      summary.max = real_or_nan(query.getColumn(4));
      summary.sum = query.getColumn(5).getDouble();
      summary.last_step = query.getColumn(6).getInt64();
      summary.last_value = real_or_nan(query.getColumn(7));
      summaries.push_back(std::move(summary));
    }
    return summaries;
  });
}

std::vector<EventRecord> TrackingReader::events(int64_t run, int64_t after_rowid) {
  return impl_->read("events", [run, after_rowid](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT rowid, time, level, source, text FROM events "
                            "WHERE run_id = ? AND rowid > ? ORDER BY rowid");
    query.bind(1, run);
    query.bind(2, after_rowid);
    return read_events(query);
  });
}

std::vector<EventRecord> TrackingReader::last_events(int64_t run, int count) {
  return impl_->read("events", [run, count](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT rowid, time, level, source, text FROM events "
                            "WHERE run_id = ? ORDER BY rowid DESC LIMIT ?");
    query.bind(1, run);
    query.bind(2, count);
    std::vector<EventRecord> events = read_events(query);
    std::reverse(events.begin(), events.end());
    return events;
  });
}

std::vector<SampleRecord> TrackingReader::samples(int64_t run, int64_t after_rowid) {
  return impl_->read("samples", [run, after_rowid](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT rowid, step, prompt, response, reward, details FROM samples "
                            "WHERE run_id = ? AND rowid > ? AND superseded = 0 ORDER BY rowid");
    query.bind(1, run);
    query.bind(2, after_rowid);
    std::vector<SampleRecord> samples;
    while (query.executeStep()) {
      SampleRecord sample;
      sample.rowid = query.getColumn(0).getInt64();
      sample.step = query.getColumn(1).getInt64();
      sample.prompt = query.getColumn(2).getString();
      sample.response = query.getColumn(3).getString();
      sample.reward = real_or_nan(query.getColumn(4));
      const std::string details = query.getColumn(5).getString();
      sample.details = nlohmann::json::parse(details, nullptr, /*allow_exceptions=*/false);
      if (sample.details.is_discarded()) sample.details = details;  // keep what was written
      samples.push_back(std::move(sample));
    }
    return samples;
  });
}

std::vector<ArtifactRecord> TrackingReader::artifacts(int64_t run) {
  return impl_->read("artifacts", [run](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT rowid, kind, path, time FROM artifacts "
                            "WHERE run_id = ? ORDER BY rowid");
    query.bind(1, run);
    std::vector<ArtifactRecord> artifacts;
    while (query.executeStep()) {
      artifacts.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getString(),
                           query.getColumn(2).getString(), query.getColumn(3).getDouble()});
    }
    return artifacts;
  });
}

std::vector<ProfileRecord> TrackingReader::profiles(int64_t run, int64_t after_rowid) {
  return impl_->read("profiles", [run, after_rowid](SQLite::Database& db) {
    SQLite::Statement query(db,
                            "SELECT rowid, step, node, kind, data FROM profiles "
                            "WHERE run_id = ? AND rowid > ? ORDER BY rowid");
    query.bind(1, run);
    query.bind(2, after_rowid);
    std::vector<ProfileRecord> profiles;
    while (query.executeStep()) {
      profiles.push_back({query.getColumn(0).getInt64(), query.getColumn(1).getInt64(),
                          query.getColumn(2).getString(), query.getColumn(3).getString(),
                          query.getColumn(4).getString()});
    }
    return profiles;
  });
}

}  // namespace rlwb::core
