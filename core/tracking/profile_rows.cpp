#include "core/tracking/profile_rows.h"

#include <SQLiteCpp/Statement.h>

#include "core/tracking/schema.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {

std::vector<int64_t> runs_with_profile_rows(const std::string& db_path, const std::string& kind) {
  SQLite::Database db = open_tracking_db_for_reading(db_path);
  try {
    SQLite::Statement query(db, "SELECT DISTINCT run_id FROM profiles WHERE kind = ? ORDER BY run_id");
    query.bind(1, kind);
    std::vector<int64_t> runs;
    while (query.executeStep()) runs.push_back(query.getColumn(0).getInt64());
    return runs;
  } catch (const SQLite::Exception& e) {
    throw TrackingError(db_path + ": reading the profiled runs failed: " + e.what());
  }
}

}  // namespace rlwb::core
