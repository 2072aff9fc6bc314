// Every row of one run of a tracking DB as text, for tests that check two
// databases hold the same run (a mirror and its source, core/tracking/run_stream.h).
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <map>
#include <string>
#include <vector>

#include "core/tracking/stream_tables.h"

namespace rlwb::testing {

// Every row of `run` in the streamed tables, in rowid order, as JSON text
// (doubles to 17 digits, so equal text is equal bits), and its params.
inline std::map<std::string, std::vector<std::string>> rows_of(const std::string& db_path, int64_t run) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  std::map<std::string, std::vector<std::string>> rows;
  for (const core::stream::Table& table : core::stream::kTables) {
    SQLite::Statement query(db, std::string("SELECT ") + table.columns + " FROM " + table.name +
                                    " WHERE run_id = ? ORDER BY rowid");
    query.bind(1, run);
    while (query.executeStep()) {
      nlohmann::json row = nlohmann::json::array();
      for (int c = 0; c < query.getColumnCount(); ++c)
        row.push_back(core::stream::to_json(query.getColumn(c)));
      rows[table.name].push_back(row.dump());
    }
  }
  SQLite::Statement params(db, "SELECT key, value FROM params WHERE run_id = ? ORDER BY key");
  params.bind(1, run);
  while (params.executeStep())
    rows["params"].push_back(params.getColumn(0).getString() + "=" + params.getColumn(1).getString());
  SQLite::Statement info(
      db, "SELECT name, status, last_step, host, seed, experiment_text FROM runs WHERE id = ?");
  info.bind(1, run);
  if (info.executeStep())
    for (int c = 0; c < 6; ++c) rows["runs"].push_back(info.getColumn(c).getString());
  return rows;
}

}  // namespace rlwb::testing
