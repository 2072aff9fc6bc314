// RunMirror: a run stream (run_stream.h) written into a local tracking DB.
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <filesystem>

#include "core/tracking/run_stream.h"
#include "core/tracking/schema.h"
#include "core/tracking/stream_tables.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

using nlohmann::json;

constexpr const char* kHostTag = "remote.host";
constexpr const char* kDbTag = "remote.db";
constexpr const char* kRunTag = "remote.run";
constexpr const char* kPidTag = "remote.pid";
constexpr const char* kCursorTag = "remote.cursor";

std::optional<int64_t> find_run(SQLite::Database& db, const std::string& host, const std::string& remote_db,
                                int64_t remote_run) {
  SQLite::Statement query(db,
                          "SELECT h.run_id FROM tags h JOIN tags d ON d.run_id = h.run_id "
                          "JOIN tags r ON r.run_id = h.run_id "
                          "WHERE h.key = ? AND h.value = ? AND d.key = ? AND d.value = ? "
                          "AND r.key = ? AND r.value = ? ORDER BY h.run_id DESC LIMIT 1");
  query.bind(1, kHostTag);
  query.bind(2, host);
  query.bind(3, kDbTag);
  query.bind(4, remote_db);
  query.bind(5, kRunTag);
  query.bind(6, std::to_string(remote_run));
  if (!query.executeStep()) return std::nullopt;
  return query.getColumn(0).getInt64();
}

void set_tag(SQLite::Database& db, int64_t run, const std::string& key, const std::string& value) {
  SQLite::Statement upsert(db,
                           "INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?) "
                           "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value");
  upsert.bind(1, run);
  upsert.bind(2, key);
  upsert.bind(3, value);
  upsert.exec();
}

std::string stored_cursor(SQLite::Database& db, int64_t run) {
  SQLite::Statement query(db, "SELECT value FROM tags WHERE run_id = ? AND key = ?");
  query.bind(1, run);
  query.bind(2, kCursorTag);
  return query.executeStep() ? query.getColumn(0).getString() : "";
}

}  // namespace

std::optional<int64_t> find_mirrored_run(const std::string& db_path, const std::string& host,
                                         const std::string& remote_db, int64_t remote_run) {
  if (!std::filesystem::exists(db_path)) return std::nullopt;
  SQLite::Database db = open_tracking_db_for_reading(db_path);
  return find_run(db, host, remote_db, remote_run);
}

struct RunMirror::Impl {
  std::string path, host, remote_db;
  int64_t remote_run;
  SQLite::Database db;
  int64_t local_run = 0;
  StreamCursor cursor;
  std::vector<json> pending;
  std::optional<std::string> end_status;

  Impl(const std::string& db_path, std::string host_name, std::string remote_path, int64_t run)
      : path(db_path),
        host(std::move(host_name)),
        remote_db(std::move(remote_path)),
        remote_run(run),
        db(open_tracking_db_for_writing(db_path)) {
    if (auto found = find_run(db, host, remote_db, remote_run)) {
      local_run = *found;
      cursor = StreamCursor::parse(stored_cursor(db, local_run));
    }
  }

  [[noreturn]] void refuse(const std::string& why) const {
    throw TrackingError(path + ": mirroring run " + std::to_string(remote_run) + " of " + host + ":" +
                        remote_db + ": " + why);
  }

  void write_run_row(const json& row) {
    if (local_run == 0) {
      SQLite::Statement insert(
          db,
          "INSERT INTO runs (name, experiment_file, experiment_text, algorithm, status, "
          "host, seed, start_time, end_time, last_step) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      int index = 1;
      for (const char* column : {"name", "experiment_file", "experiment_text", "algorithm", "status", "host",
                                 "seed", "start_time", "end_time", "last_step"})
        stream::bind_json(insert, index++, row.at(column));
      insert.exec();
      local_run = db.getLastInsertRowid();
      set_tag(db, local_run, kHostTag, host);
      set_tag(db, local_run, kDbTag, remote_db);
      set_tag(db, local_run, kRunTag, std::to_string(remote_run));
    } else {
      SQLite::Statement update(
          db, "UPDATE runs SET status = ?, host = ?, end_time = ?, last_step = ? WHERE id = ?");
      int index = 1;
      for (const char* column : {"status", "host", "end_time", "last_step"})
        stream::bind_json(update, index++, row.at(column));
      update.bind(index, local_run);
      update.exec();
    }
    set_tag(db, local_run, kPidTag, row.at("pid").dump());
  }

  void write_params(const json& rows) {
    SQLite::Statement insert(db, "INSERT OR REPLACE INTO params (run_id, key, value) VALUES (?, ?, ?)");
    for (const json& pair : rows) {
      insert.bind(1, local_run);
      insert.bind(2, pair.at(0).get<std::string>());
      insert.bind(3, pair.at(1).get<std::string>());
      insert.exec();
      insert.reset();
    }
  }

  void write_superseded(const stream::Table& table, const json& ranges, int64_t count) {
    SQLite::Statement mark(db, std::string("UPDATE ") + table.name +
                                   " SET superseded = 1 WHERE rowid IN (SELECT rowid FROM " + table.name +
                                   " WHERE run_id = ? ORDER BY rowid LIMIT ? OFFSET ?)");
    for (const json& range : ranges) {
      mark.bind(1, local_run);
      mark.bind(2, range.at(1).get<int64_t>());
      mark.bind(3, range.at(0).get<int64_t>());
      mark.exec();
      mark.reset();
    }
    SQLite::Statement check(
        db, std::string("SELECT count(*) FROM ") + table.name + " WHERE run_id = ? AND superseded = 1");
    check.bind(1, local_run);
    check.executeStep();
    if (check.getColumn(0).getInt64() != count)
      refuse("after the superseded marks " + std::string(table.name) + " has " +
             std::to_string(check.getColumn(0).getInt64()) + " superseded rows, the source " +
             std::to_string(count) + ": the mirror is out of step; delete the mirrored run and follow again");
  }

  void write_rows(const stream::Table& table, const json& rows, StreamCursor& next) {
    std::string placeholders = "?";
    for (const char* c = table.columns; *c; ++c)
      if (*c == ',') placeholders += ", ?";
    SQLite::Statement insert(db, std::string("INSERT INTO ") + table.name + " (run_id, " + table.columns +
                                     ") VALUES (?, " + placeholders + ")");
    int64_t& after = next.after[table.name];
    for (const json& row : rows) {
      const int64_t rowid = row.at(0).get<int64_t>();
      if (rowid <= after)
        refuse(std::string(table.name) + " row " + std::to_string(rowid) + " came again after row " +
               std::to_string(after));
      after = rowid;
      insert.bind(1, local_run);
      for (size_t i = 1; i < row.size(); ++i) stream::bind_json(insert, static_cast<int>(i) + 1, row[i]);
      insert.exec();
      insert.reset();
    }
  }

  void commit(const std::string& cursor_text) {
    const StreamCursor sent = StreamCursor::parse(cursor_text);
    StreamCursor next = cursor;
    const int64_t run_before = local_run;
    try {
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (const json& line : pending) {
        const std::string kind = line.at("kind").get<std::string>();
        if (kind == "run") {
          write_run_row(line);
          continue;
        }
        if (local_run == 0) refuse("a '" + kind + "' line came before the run's row");
        if (kind == "params") {
          write_params(line.at("rows"));
          continue;
        }
        const stream::Table* table = stream::find_table(line.at("table").get<std::string>());
        if (!table) refuse("no table '" + line.at("table").get<std::string>() + "' in a stream");
        if (kind == "superseded")
          write_superseded(*table, line.at("ranges"), line.at("count").get<int64_t>());
        else
          write_rows(*table, line.at("rows"), next);
      }
      if (local_run == 0) refuse("a batch without the run's row");
      for (const auto& [table, rowid] : sent.after)
        if (next.after[table] != rowid)
          refuse("the batch's cursor says " + table + " up to row " + std::to_string(rowid) +
                 " but its rows end at " + std::to_string(next.after[table]));
      set_tag(db, local_run, kCursorTag, cursor_text);
      transaction.commit();
    } catch (const SQLite::Exception& e) {
      local_run = run_before;
      pending.clear();
      refuse(std::string("writing a batch: ") + e.what());
    } catch (...) {
      local_run = run_before;
      pending.clear();
      throw;
    }
    pending.clear();
    cursor = sent;
  }
};

RunMirror::RunMirror(const std::string& db_path, const std::string& host, const std::string& remote_db,
                     int64_t remote_run)
    : impl_(std::make_unique<Impl>(db_path, host, remote_db, remote_run)) {}
RunMirror::~RunMirror() = default;

void RunMirror::apply(const std::string& line) {
  json parsed;
  try {
    parsed = json::parse(line);
  } catch (const json::exception&) {
    impl_->refuse("not a line of a run stream: '" + line.substr(0, 80) + "'");
  }
  if (!parsed.is_object() || !parsed.contains("kind") || !parsed["kind"].is_string())
    impl_->refuse("a line without a kind: '" + line.substr(0, 80) + "'");
  const std::string kind = parsed["kind"].get<std::string>();
  try {
    if (kind == "alive") return;
    if (kind == "end") {
      impl_->end_status = parsed.at("status").get<std::string>();
      return;
    }
    if (kind == "cursor") {
      impl_->commit(parsed.at("cursor").get<std::string>());
      return;
    }
    if (kind != "run" && kind != "params" && kind != "superseded" && kind != "rows")
      impl_->refuse("a line of unknown kind '" + kind + "'");
    impl_->pending.push_back(std::move(parsed));
  } catch (const json::exception& e) {
    impl_->pending.clear();
    impl_->refuse("a '" + kind + "' line lacks what it should hold (" + e.what() + ")");
  }
}

void RunMirror::discard_partial_batch() { impl_->pending.clear(); }
int64_t RunMirror::local_run() const { return impl_->local_run; }
StreamCursor RunMirror::cursor() const { return impl_->cursor; }
std::optional<std::string> RunMirror::end_status() const { return impl_->end_status; }

}  // namespace rlwb::core
