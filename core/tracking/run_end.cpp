// Ending a run (see run_end.h).
#include "core/tracking/run_end.h"

#include <SQLiteCpp/Statement.h>

#include "core/tracking/time_now.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {

void require_end_status(const std::string& status) {
  if (status != "finished" && status != "failed" && status != "interrupted") {
    throw TrackingError("a run ends as finished, failed or interrupted, not '" + status + "'");
  }
}

void insert_event(SQLite::Database& db, int64_t run, const std::string& level, const std::string& source,
                  const std::string& text) {
  SQLite::Statement insert(db,
                           "INSERT INTO events (run_id, time, level, source, text) VALUES (?, ?, ?, ?, ?)");
  insert.bind(1, run);
  insert.bind(2, unix_time_now());
  insert.bind(3, level);
  insert.bind(4, source);
  insert.bind(5, text);
  insert.exec();
}

void record_run_end(SQLite::Database& db, int64_t run, const std::string& status, const std::string& error,
                    const std::string& source) {
  SQLite::Statement update(db, "UPDATE runs SET status = ?, end_time = ? WHERE id = ?");
  update.bind(1, status);
  update.bind(2, unix_time_now());
  update.bind(3, run);
  update.exec();
  if (!error.empty()) insert_event(db, run, "error", source, error);
}

}  // namespace rlwb::core
