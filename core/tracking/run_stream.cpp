// RunStream and StreamCursor (see run_stream.h).
#include "core/tracking/run_stream.h"

#include <SQLiteCpp/Statement.h>

#include <sstream>

#include "core/tracking/schema.h"
#include "core/tracking/stream_tables.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

using nlohmann::json;

constexpr const char* kRunColumns[] = {
    "name", "experiment_file", "experiment_text", "algorithm", "status", "host",
    "seed", "start_time",      "end_time",        "last_step", "pid"};

json read_run_row(SQLite::Database& db, int64_t run, const std::string& path) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < std::size(kRunColumns); ++i) sql += (i ? ", " : "") + std::string(kRunColumns[i]);
  SQLite::Statement query(db, sql + " FROM runs WHERE id = ?");
  query.bind(1, run);
  if (!query.executeStep()) throw TrackingError(path + ": no run " + std::to_string(run));
  json row = {{"kind", "run"}};
  for (size_t i = 0; i < std::size(kRunColumns); ++i)
    row[kRunColumns[i]] = stream::to_json(query.getColumn(static_cast<int>(i)));
  return row;
}

int64_t count_superseded(SQLite::Database& db, const stream::Table& table, int64_t run, int64_t upto) {
  SQLite::Statement query(db, std::string("SELECT count(*) FROM ") + table.name +
                                  " WHERE run_id = ? AND rowid <= ? AND superseded = 1");
  query.bind(1, run);
  query.bind(2, upto);
  query.executeStep();
  return query.getColumn(0).getInt64();
}

// [position, length] of each run of superseded rows among the run's rows of
// `table` up to rowid `upto`, positions counted in rowid order from 0.
json superseded_ranges(SQLite::Database& db, const stream::Table& table, int64_t run, int64_t upto) {
  SQLite::Statement query(db, std::string("SELECT superseded FROM ") + table.name +
                                  " WHERE run_id = ? AND rowid <= ? ORDER BY rowid");
  query.bind(1, run);
  query.bind(2, upto);
  json ranges = json::array();
  int64_t position = 0, start = -1;
  while (query.executeStep()) {
    const bool superseded = query.getColumn(0).getInt() != 0;
    if (superseded && start < 0) start = position;
    if (!superseded && start >= 0) {
      ranges.push_back({start, position - start});
      start = -1;
    }
    ++position;
  }
  if (start >= 0) ranges.push_back({start, position - start});
  return ranges;
}

}  // namespace

std::string StreamCursor::to_string() const {
  std::ostringstream out;
  for (const stream::Table& table : stream::kTables) {
    auto found = after.find(table.name);
    out << table.name << "=" << (found == after.end() ? 0 : found->second) << ",";
    if (table.has_superseded) {
      auto count = superseded.find(table.name);
      out << table.name << ".superseded=" << (count == superseded.end() ? 0 : count->second) << ",";
    }
  }
  out << "params=" << (params_sent ? 1 : 0);
  return out.str();
}

StreamCursor StreamCursor::parse(const std::string& text) {
  StreamCursor cursor;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    if (part.empty()) continue;
    const auto equals = part.find('=');
    const std::string key = part.substr(0, equals);
    int64_t value = -1;
    try {
      size_t used = 0;
      if (equals != std::string::npos) value = std::stoll(part.substr(equals + 1), &used);
      if (used != part.size() - equals - 1) value = -1;
    } catch (const std::exception&) {
    }
    const auto dot = key.find('.');
    const stream::Table* table = stream::find_table(key.substr(0, dot));
    const bool known =
        key == "params" ||
        (table && (dot == std::string::npos || (table->has_superseded && key.substr(dot) == ".superseded")));
    if (!known || value < 0)
      throw TrackingError("stream cursor '" + text + "': '" + part +
                          "' is not TABLE=ROWID, TABLE.superseded=COUNT or params=0|1 (TABLE one of metrics, "
                          "events, samples, artifacts, profiles); pass the cursor a follow printed");
    if (key == "params")
      cursor.params_sent = value != 0;
    else if (dot == std::string::npos)
      cursor.after[table->name] = value;
    else
      cursor.superseded[table->name] = value;
  }
  return cursor;
}

struct RunStream::Impl {
  std::string path;
  SQLite::Database db;
  int64_t run;
  StreamCursor cursor;
  json last_run_row;
  bool ended = false;
  std::string status;

  Impl(const std::string& db_path, int64_t run_id, StreamCursor since)
      : path(db_path), db(open_tracking_db_for_reading(db_path)), run(run_id), cursor(std::move(since)) {
    read_run_row(db, run, path);  // throws for an unknown run before any line
  }

  std::vector<std::string> batch(int max_rows) {
    std::vector<std::string> lines;
    bool hit_limit = false;
    StreamCursor next = cursor;
    db.exec("BEGIN");  // deferred: the first read fixes one snapshot for the batch
    try {
      json row = read_run_row(db, run, path);
      if (row != last_run_row) lines.push_back(row.dump());
      status = row["status"].get<std::string>();
      if (!next.params_sent) {
        SQLite::Statement query(db, "SELECT key, value FROM params WHERE run_id = ? ORDER BY key");
        query.bind(1, run);
        json params = json::array();
        while (query.executeStep())
          params.push_back({query.getColumn(0).getString(), query.getColumn(1).getString()});
        lines.push_back(json{{"kind", "params"}, {"rows", params}}.dump());
        next.params_sent = true;
      }
      // Marks on rows already sent go before new rows: the mirror applies
      // them to its copies of exactly those rows.
      for (const stream::Table& table : stream::kTables) {
        if (!table.has_superseded) continue;
        const int64_t upto = next.after[table.name];
        const int64_t count = count_superseded(db, table, run, upto);
        if (count == next.superseded[table.name]) continue;
        lines.push_back(json{
            {"kind", "superseded"},
            {"table", table.name},
            {"ranges", superseded_ranges(db, table, run, upto)},
            {"count",
             count}}.dump());
        next.superseded[table.name] = count;
      }
      for (const stream::Table& table : stream::kTables) {
        SQLite::Statement query(db, std::string("SELECT rowid, ") + table.columns + " FROM " + table.name +
                                        " WHERE run_id = ? AND rowid > ? ORDER BY rowid LIMIT ?");
        query.bind(1, run);
        query.bind(2, next.after[table.name]);
        query.bind(3, max_rows);
        json rows = json::array();
        const int columns = query.getColumnCount();
        while (query.executeStep()) {
          json values = json::array();
          for (int c = 0; c < columns; ++c) values.push_back(stream::to_json(query.getColumn(c)));
          next.after[table.name] = values[0].get<int64_t>();
          if (table.has_superseded && values.back().get<int64_t>() != 0) ++next.superseded[table.name];
          rows.push_back(std::move(values));
        }
        if (static_cast<int>(rows.size()) == max_rows) hit_limit = true;
        if (!rows.empty())
          lines.push_back(json{{"kind", "rows"}, {"table", table.name}, {"rows", rows}}.dump());
      }
      db.exec("COMMIT");
      last_run_row = std::move(row);
    } catch (...) {
      db.exec("ROLLBACK");
      throw;
    }
    ended = status != "running" && !hit_limit;
    if (lines.empty()) return lines;
    lines.push_back(json{{"kind", "cursor"}, {"cursor", next.to_string()}}.dump());
    cursor = std::move(next);
    return lines;
  }
};

RunStream::RunStream(const std::string& db_path, int64_t run, StreamCursor since)
    : impl_(std::make_unique<Impl>(db_path, run, std::move(since))) {}
RunStream::~RunStream() = default;

std::vector<std::string> RunStream::next_batch(int max_rows) {
  try {
    return impl_->batch(max_rows);
  } catch (const SQLite::Exception& e) {
    throw TrackingError(impl_->path + ": reading run " + std::to_string(impl_->run) + ": " + e.what());
  }
}

bool RunStream::ended() const { return impl_->ended; }
std::string RunStream::end_status() const { return impl_->status; }
const StreamCursor& RunStream::cursor() const { return impl_->cursor; }

}  // namespace rlwb::core
