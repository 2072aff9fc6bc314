// The tracking DB's schema and how files are opened: creation, migration of
// an old file, and refusing files this build must not touch.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "core/tracking/schema.h"
#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::HasSubstr;
using namespace tracking_test;

std::set<std::string> names_of(SQLite::Database& db, const std::string& type) {
  SQLite::Statement query(db, "SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%'");
  query.bind(1, type);
  std::set<std::string> names;
  while (query.executeStep()) names.insert(query.getColumn(0).getString());
  return names;
}

std::set<std::string> columns_of(SQLite::Database& db, const std::string& table) {
  SQLite::Statement query(db, "SELECT name FROM pragma_table_info(?)");
  query.bind(1, table);
  std::set<std::string> names;
  while (query.executeStep()) names.insert(query.getColumn(0).getString());
  return names;
}

std::string error_of(const std::function<void()>& open) {
  try {
    open();
  } catch (const TrackingError& e) {
    return e.what();
  }
  return "(no error)";
}

// The layout a version-1 build wrote, by hand (not through the migration
// code), with one run in it.
void write_version_1_database(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(R"sql(
    PRAGMA journal_mode = WAL;
    CREATE TABLE schema_version (version INTEGER NOT NULL);
    INSERT INTO schema_version VALUES (1);
    CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
      experiment_file TEXT NOT NULL DEFAULT '', experiment_text TEXT NOT NULL DEFAULT '',
      algorithm TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, host TEXT NOT NULL DEFAULT '',
      seed INTEGER NOT NULL DEFAULT 0, start_time REAL NOT NULL, end_time REAL,
      last_step INTEGER NOT NULL DEFAULT -1);
    CREATE TABLE params (run_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
      PRIMARY KEY (run_id, key)) WITHOUT ROWID;
    CREATE TABLE metrics (run_id INTEGER NOT NULL, key TEXT NOT NULL, step INTEGER NOT NULL,
      value REAL, wall_time REAL NOT NULL);
    CREATE INDEX metrics_by_key_step ON metrics (run_id, key, step);
    CREATE INDEX metrics_by_run ON metrics (run_id);
    CREATE TABLE events (run_id INTEGER NOT NULL, time REAL NOT NULL, level TEXT NOT NULL,
      source TEXT NOT NULL, text TEXT NOT NULL);
    CREATE INDEX events_by_run ON events (run_id);
    CREATE TABLE artifacts (run_id INTEGER NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,
      time REAL NOT NULL);
    CREATE INDEX artifacts_by_run ON artifacts (run_id);
    CREATE TABLE samples (run_id INTEGER NOT NULL, step INTEGER NOT NULL, prompt TEXT NOT NULL,
      response TEXT NOT NULL, reward REAL, details TEXT NOT NULL DEFAULT '{}');
    CREATE INDEX samples_by_run ON samples (run_id);
    CREATE TABLE profiles (run_id INTEGER NOT NULL, step INTEGER NOT NULL, node TEXT NOT NULL,
      kind TEXT NOT NULL, data TEXT NOT NULL);
    CREATE INDEX profiles_by_run ON profiles (run_id, step);
    INSERT INTO runs (name, algorithm, status, host, seed, start_time, end_time, last_step)
      VALUES ('old-run', 'ppo', 'finished', 'oldhost', 7, 1700000000, 1700000100, 2);
    INSERT INTO params VALUES (1, 'trainer.steps', '3');
    INSERT INTO metrics VALUES (1, 'critic/score/mean', 0, 0.1, 1700000010),
                               (1, 'critic/score/mean', 1, 0.2, 1700000020),
                               (1, 'critic/score/mean', 2, 0.3, 1700000030);
  )sql");
}

TEST_F(TrackingTest, NewDatabaseHasEveryTableIndexAndTheCurrentVersionInWalMode) {
  { TrackingWriter writer(path()); }
  SQLite::Database db(path());
  EXPECT_EQ(names_of(db, "table"),
            (std::set<std::string>{"schema_version", "runs", "params", "metrics", "events", "artifacts",
                                   "samples", "profiles", "tags"}));
  EXPECT_EQ(names_of(db, "index"),
            (std::set<std::string>{"metrics_by_key_step", "metrics_by_run", "events_by_run",
                                   "artifacts_by_run", "samples_by_run", "profiles_by_run"}));
  EXPECT_EQ(columns_of(db, "runs"),
            (std::set<std::string>{"id", "name", "experiment_file", "experiment_text", "algorithm", "status",
                                   "host", "seed", "start_time", "end_time", "last_step", "pid",
                                   "process_start", "from_run"}));
  EXPECT_EQ(columns_of(db, "metrics"),
            (std::set<std::string>{"run_id", "key", "step", "value", "wall_time", "superseded"}));
  EXPECT_EQ(columns_of(db, "samples"), (std::set<std::string>{"run_id", "step", "prompt", "response",
                                                              "reward", "details", "superseded"}));
  EXPECT_EQ(columns_of(db, "profiles"), (std::set<std::string>{"run_id", "step", "node", "kind", "data"}));
  EXPECT_EQ(tracking_schema_version(db), kTrackingSchemaVersion);
  SQLite::Statement mode(db, "PRAGMA journal_mode");
  ASSERT_TRUE(mode.executeStep());
  EXPECT_EQ(mode.getColumn(0).getString(), "wal");
}

TEST_F(TrackingTest, WriterCreatesTheDatabaseDirectoryIfMissing) {
  const std::string nested = path("workspace/runs/rlwb.db");
  TrackingWriter writer(nested);
  writer.start_run("r", "", "", "ppo", 0, nullptr);
  EXPECT_TRUE(std::filesystem::exists(nested));
}

TEST_F(TrackingTest, PollingQueriesUseTheRunIndexInsteadOfScanningTheTable) {
  { TrackingWriter writer(path()); }
  SQLite::Database db(path());
  SQLite::Statement plan(db,
                         "EXPLAIN QUERY PLAN SELECT rowid FROM metrics WHERE run_id = 1 AND "
                         "rowid > 5 ORDER BY rowid");
  std::string details;
  while (plan.executeStep()) details += plan.getColumn(3).getString() + "\n";
  EXPECT_THAT(details, HasSubstr("USING COVERING INDEX metrics_by_run (run_id=? AND rowid>?)"));
}

TEST_F(TrackingTest, OpeningAVersion1DatabaseMigratesItAndKeepsItsRuns) {
  write_version_1_database(path());
  {
    TrackingAdmin admin(path());  // the migration happens on open
    admin.set_tag(1, "note", "from v1");
  }
  {
    SQLite::Database db(path());
    EXPECT_EQ(tracking_schema_version(db), kTrackingSchemaVersion);
    EXPECT_TRUE(columns_of(db, "runs").count("pid"));
    EXPECT_TRUE(columns_of(db, "runs").count("from_run"));
  }
  TrackingReader reader(path());
  const auto old_run = reader.run(1);
  ASSERT_TRUE(old_run);
  EXPECT_EQ(old_run->name, "old-run");
  EXPECT_EQ(old_run->pid, 0);
  EXPECT_EQ(old_run->from_run, 0);  // an old run was relaunched from none
  EXPECT_EQ(old_run->last_step, 2);
  EXPECT_DOUBLE_EQ(*old_run->last_score, 0.3);
  EXPECT_EQ(reader.metrics(1).size(), 3u);
  EXPECT_EQ(reader.params(1), (std::vector<std::pair<std::string, std::string>>{{"trainer.steps", "3"}}));
  EXPECT_EQ(reader.tags(1), (std::vector<std::pair<std::string, std::string>>{{"note", "from v1"}}));

  TrackingWriter writer(path());  // opening a current file again changes nothing
  EXPECT_EQ(writer.start_run("new-run", "", "", "grpo", 1, nullptr), 2);
}

TEST_F(TrackingTest, ReaderRefusesAnOlderDatabaseAndSaysHowToMigrateIt) {
  write_version_1_database(path());
  EXPECT_THAT(error_of([&] { TrackingReader reader(path()); }),
              HasSubstr("schema version 1 is older than this build's"));
}

TEST_F(TrackingTest, DatabaseFromANewerBuildIsRefusedAndLeftUnchanged) {
  { TrackingWriter writer(path()); }
  {
    SQLite::Database db(path(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE schema_version SET version = 99");
  }
  const std::string before = read_bytes(path());
  for (const auto& open : std::vector<std::function<void()>>{[&] { TrackingWriter writer(path()); },
                                                             [&] { TrackingAdmin admin(path()); },
                                                             [&] { TrackingReader reader(path()); }}) {
    const std::string error = error_of(open);
    EXPECT_THAT(error, HasSubstr("schema version 99 is newer"));
    EXPECT_THAT(error, HasSubstr("upgrade RLWB"));
  }
  EXPECT_EQ(read_bytes(path()), before);
}

TEST_F(TrackingTest, NonSqliteFileIsRefusedAndLeftByteIdentical) {
  const std::string bytes = "name,score\nrun-a,0.5\n" + std::string(5000, 'x');
  write_bytes(path("results.csv"), bytes);
  for (const auto& open :
       std::vector<std::function<void()>>{[&] { TrackingWriter writer(path("results.csv")); },
                                          [&] { TrackingAdmin admin(path("results.csv")); },
                                          [&] { TrackingReader reader(path("results.csv")); }}) {
    EXPECT_THAT(error_of(open), HasSubstr("not an SQLite database"));
  }
  EXPECT_EQ(read_bytes(path("results.csv")), bytes);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), std::filesystem::directory_iterator()),
            1)
      << "no -wal, -shm or -journal file may appear next to it";
}

TEST_F(TrackingTest, SqliteDatabaseOfAnotherProgramIsRefusedAndLeftByteIdentical) {
  {
    SQLite::Database other(path("app.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    other.exec(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); "
        "INSERT INTO users (name) VALUES ('ada')");
  }
  const std::string before = read_bytes(path("app.db"));
  EXPECT_THAT(error_of([&] { TrackingWriter writer(path("app.db")); }),
              HasSubstr("not an RLWB tracking database"));
  EXPECT_THAT(error_of([&] { TrackingReader reader(path("app.db")); }),
              HasSubstr("not an RLWB tracking database"));
  EXPECT_EQ(read_bytes(path("app.db")), before);
}

TEST_F(TrackingTest, ReaderOfAMissingFileFailsWithoutCreatingIt) {
  EXPECT_THAT(error_of([&] { TrackingReader reader(path()); }), HasSubstr("no tracking database here"));
  EXPECT_FALSE(std::filesystem::exists(path()));
}

TEST_F(TrackingTest, EmptyFileIsTakenAsANewDatabase) {
  write_bytes(path(), "");
  TrackingWriter writer(path());
  writer.start_run("r", "", "", "ppo", 0, nullptr);
  TrackingReader reader(path());
  EXPECT_EQ(reader.list_runs().size(), 1u);
}

}  // namespace
}  // namespace rlwb::core
