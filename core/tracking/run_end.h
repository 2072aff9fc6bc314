// Ending a run: the one place that sets a final status, its end time and the
// error event that says why. Used by TrackingWriter::end_run (the controller
// ends its own run) and TrackingAdmin (a run whose controller died).
#pragma once

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <string>

namespace rlwb::core {

// Throws TrackingError unless status is finished, failed or interrupted.
void require_end_status(const std::string& status);

// Inside the caller's transaction: sets status and end time, and adds
// `error` (if not empty) as an "error" event from `source`.
void record_run_end(SQLite::Database& db, int64_t run, const std::string& status, const std::string& error,
                    const std::string& source);

void insert_event(SQLite::Database& db, int64_t run, const std::string& level, const std::string& source,
                  const std::string& text);

}  // namespace rlwb::core
