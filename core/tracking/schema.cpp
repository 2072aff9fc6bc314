// Schema of the tracking DB as a list of migrations, and opening a file safely
// (see schema.h). A new database runs every migration in order, so the
// upgrade path of old files is the same code that builds new ones.
#include "core/tracking/schema.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <filesystem>
#include <iterator>
#include <system_error>

#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

struct Migration {
  int to_version;
  const char* sql;
};

// Never edit a migration that has shipped; append a new one instead (and
// bump kTrackingSchemaVersion). Foreign keys document the links; they are not
// enforced: the writer checks run ids and delete_run removes dependent rows.
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (0);
CREATE TABLE runs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused after delete
  name            TEXT NOT NULL,
  experiment_file TEXT NOT NULL DEFAULT '',
  experiment_text TEXT NOT NULL DEFAULT '',
  algorithm       TEXT NOT NULL DEFAULT '',
  status          TEXT NOT NULL,                      -- running/finished/failed/interrupted
  host            TEXT NOT NULL DEFAULT '',
  seed            INTEGER NOT NULL DEFAULT 0,
  start_time      REAL NOT NULL,                      -- unix seconds
  end_time        REAL,                               -- NULL while running
  last_step       INTEGER NOT NULL DEFAULT -1);
CREATE TABLE params (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  key    TEXT NOT NULL,                               -- dotted: trainer.steps
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)) WITHOUT ROWID;
CREATE TABLE metrics (
  run_id    INTEGER NOT NULL REFERENCES runs(id),
  key       TEXT NOT NULL,
  step      INTEGER NOT NULL,
  value     REAL,                                     -- NULL is NaN
  wall_time REAL NOT NULL);
CREATE INDEX metrics_by_key_step ON metrics (run_id, key, step);
CREATE INDEX metrics_by_run ON metrics (run_id);      -- (run_id, rowid): polling
CREATE TABLE events (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  time   REAL NOT NULL,
  level  TEXT NOT NULL,
  source TEXT NOT NULL,
  text   TEXT NOT NULL);
CREATE INDEX events_by_run ON events (run_id);
CREATE TABLE artifacts (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kind   TEXT NOT NULL,
  path   TEXT NOT NULL,
  time   REAL NOT NULL);
CREATE INDEX artifacts_by_run ON artifacts (run_id);
CREATE TABLE samples (
  run_id   INTEGER NOT NULL REFERENCES runs(id),
  step     INTEGER NOT NULL,
  prompt   TEXT NOT NULL,
  response TEXT NOT NULL,
  reward   REAL,
  details  TEXT NOT NULL DEFAULT '{}');               -- JSON
CREATE INDEX samples_by_run ON samples (run_id);
CREATE TABLE profiles (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  step   INTEGER NOT NULL,
  node   TEXT NOT NULL,
  kind   TEXT NOT NULL,
  data   TEXT NOT NULL);
CREATE INDEX profiles_by_run ON profiles (run_id, step);
)sql"},
    {2, R"sql(
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN process_start TEXT NOT NULL DEFAULT '';
CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)) WITHOUT ROWID;
)sql"},
    {3, R"sql(
ALTER TABLE runs ADD COLUMN from_run INTEGER NOT NULL DEFAULT 0;  -- the run it was relaunched from; 0: none
)sql"},
    {4, R"sql(
-- 1: written by an attempt of the run after the checkpoint a resume continued
-- from (rlwb run --resume); kept, never read as the run's data.
ALTER TABLE metrics ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN superseded INTEGER NOT NULL DEFAULT 0;
)sql"},
};
static_assert(std::size(kMigrations) == kTrackingSchemaVersion, "one migration per schema version");

bool has_table(SQLite::Database& db, const char* name) {
  SQLite::Statement query(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, name);
  return query.executeStep();
}

int count_tables(SQLite::Database& db) {
  SQLite::Statement query(db, "SELECT count(*) FROM sqlite_master");
  query.executeStep();
  return query.getColumn(0).getInt();
}

// The version stored in `db`; 0 for an empty database (no tables at all).
// Throws if the database has tables but is not an RLWB tracking database.
int stored_version(SQLite::Database& db, const std::string& path) {
  if (!has_table(db, "schema_version")) {
    if (count_tables(db) == 0) return 0;
    throw TrackingError(path +
                        ": this SQLite database is not an RLWB tracking database (it has no "
                        "schema_version table); RLWB left it untouched. Point RLWB at another "
                        "file (default runs/rlwb.db).");
  }
  SQLite::Statement query(db, "SELECT max(version) FROM schema_version");
  if (!query.executeStep() || query.getColumn(0).isNull()) {
    throw TrackingError(path +
                        ": the schema_version table is empty; the file is damaged or "
                        "not an RLWB tracking database.");
  }
  return query.getColumn(0).getInt();
}

void refuse_newer(int version, const std::string& path) {
  if (version > kTrackingSchemaVersion) {
    throw TrackingError(path + ": tracking database schema version " + std::to_string(version) +
                        " is newer than this RLWB build understands (" +
                        std::to_string(kTrackingSchemaVersion) + "); upgrade RLWB to open it.");
  }
}

// Translates SQLite's errors on a file we did not create into what to do.
[[noreturn]] void rethrow_open_error(const SQLite::Exception& e, const std::string& path) {
  const int code = e.getErrorCode() & 0xff;
  if (code == SQLITE_NOTADB) {
    throw TrackingError(path +
                        ": not an SQLite database, so not an RLWB tracking database; "
                        "RLWB left it untouched. Point RLWB at another file (default "
                        "runs/rlwb.db).");
  }
  if (code == SQLITE_BUSY) {
    throw TrackingError(path + ": database stayed locked for " +
                        std::to_string(kTrackingBusyTimeoutMs / 1000) + " s by another process: " + e.what());
  }
  throw TrackingError(path + ": cannot open tracking database: " + e.what());
}

// Reads the version of an existing file through a read-only connection, so a
// foreign file is never modified by the check.
int inspect_existing_file(const std::string& path) {
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY, kTrackingBusyTimeoutMs);
    return stored_version(db, path);
  } catch (const SQLite::Exception& e) {
    rethrow_open_error(e, path);
  }
}

void configure_writer_connection(SQLite::Database& db, const std::string& path) {
  SQLite::Statement wal(db, "PRAGMA journal_mode = WAL");
  wal.executeStep();
  if (wal.getColumn(0).getString() != "wal") {
    throw TrackingError(path +
                        ": the file system does not support SQLite's WAL mode (journal "
                        "mode stayed '" +
                        wal.getColumn(0).getString() + "'); put the tracking database on a local disk.");
  }
  // FULL: each commit is fsynced, so a batch survives a power loss too; with
  // batched commits that is a few fsyncs a second.
  db.exec("PRAGMA synchronous = FULL");
}

void migrate(SQLite::Database& db, const std::string& path) {
  // IMMEDIATE: two processes opening an old file at once migrate it once.
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  const int version = stored_version(db, path);
  refuse_newer(version, path);
  if (version == kTrackingSchemaVersion) return;  // rollback of nothing
  for (const Migration& migration : kMigrations) {
    if (migration.to_version <= version) continue;
    db.exec(migration.sql);
    SQLite::Statement set_version(db, "UPDATE schema_version SET version = ?");
    set_version.bind(1, migration.to_version);
    set_version.exec();
  }
  transaction.commit();
}

}  // namespace

int tracking_schema_version(SQLite::Database& db) { return stored_version(db, db.getFilename()); }

SQLite::Database open_tracking_db_for_writing(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) {
    refuse_newer(inspect_existing_file(path), path);
  } else {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) {
      fs::create_directories(dir, ec);
      if (ec) {
        throw TrackingError(path + ": cannot create the directory " + dir.string() + ": " + ec.message());
      }
    }
  }
  try {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kTrackingBusyTimeoutMs);
    configure_writer_connection(db, path);
    migrate(db, path);
    return db;
  } catch (const SQLite::Exception& e) {
    rethrow_open_error(e, path);
  }
}

SQLite::Database open_tracking_db_for_reading(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    throw TrackingError(path +
                        ": no tracking database here (no run has been recorded yet, or "
                        "the workspace is elsewhere).");
  }
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY, kTrackingBusyTimeoutMs);
    const int version = stored_version(db, path);
    refuse_newer(version, path);
    if (version < kTrackingSchemaVersion) {
      throw TrackingError(path + ": tracking database schema version " + std::to_string(version) +
                          " is older than this build's " + std::to_string(kTrackingSchemaVersion) +
                          "; start a run or any `rlwb runs` command that changes runs (rename, "
                          "tag, delete) to migrate it, then read it again.");
    }
    return db;
  } catch (const SQLite::Exception& e) {
    rethrow_open_error(e, path);
  }
}

}  // namespace rlwb::core
