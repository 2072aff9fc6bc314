// TrackingAdmin: rename, tags, delete, and ending runs whose controller died.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using namespace tracking_test;

constexpr const char* kRunTables[] = {"params",  "metrics",  "events", "artifacts",
                                      "samples", "profiles", "tags"};

int64_t rows_of_run(const std::string& db_path, const std::string& table, int64_t run) {
  SQLite::Database db(db_path);
  SQLite::Statement query(db, "SELECT count(*) FROM " + table + " WHERE run_id = ?");
  query.bind(1, run);
  query.executeStep();
  return query.getColumn(0).getInt64();
}

// A run with a row in every table, ended so that it may be deleted.
int64_t full_run(TrackingWriter& writer, TrackingAdmin& admin, const std::string& name) {
  const int64_t run = writer.start_run(name, "e.yaml", "text", "ppo", 1, {{"lr", 0.1}});
  writer.log_metric(run, "a", 0, 1);
  writer.log_event(run, "info", "controller", "hi");
  writer.log_sample(run, 0, "p", "r", 1, nullptr);
  writer.log_profile(run, 0, "actor", "trace", "{}");
  writer.log_artifact(run, "checkpoint", "ckpt/" + name);
  writer.end_run(run, "finished");
  admin.set_tag(run, "kind", "baseline");
  return run;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const TrackingError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(TrackingTest, DeleteRunRemovesThatRunAndAllItsRowsAndNothingElse) {
  TrackingWriter writer(path());
  TrackingAdmin admin(path());
  const int64_t doomed = full_run(writer, admin, "doomed");
  const int64_t kept = full_run(writer, admin, "kept");
  admin.delete_run(doomed);

  TrackingReader reader(path());
  EXPECT_FALSE(reader.run(doomed));
  ASSERT_TRUE(reader.run(kept));
  for (const char* table : kRunTables) {
    EXPECT_EQ(rows_of_run(path(), table, doomed), 0) << table;
    EXPECT_EQ(rows_of_run(path(), table, kept), 1) << table;
  }
  EXPECT_THAT(error_of([&] { admin.delete_run(doomed); }), HasSubstr("there is no run"));
  EXPECT_GT(writer.start_run("after", "", "", "ppo", 0, nullptr), kept)
      << "ids of deleted runs are not reused";
}

TEST_F(TrackingTest, DeleteRunRefusesARunWhoseControllerIsAlive) {
  TrackingWriter writer(path());
  TrackingAdmin admin(path());
  const int64_t run = writer.start_run("live", "", "", "ppo", 0, nullptr);
  EXPECT_THAT(error_of([&] { admin.delete_run(run); }), HasSubstr("is still running"));
  TrackingReader reader(path());
  EXPECT_TRUE(reader.run(run));
}

TEST_F(TrackingTest, RenameAndTagsChangeOnlyTheirRun) {
  TrackingWriter writer(path());
  TrackingAdmin admin(path());
  const int64_t run = writer.start_run("old", "", "", "ppo", 0, nullptr);
  const int64_t other = writer.start_run("other", "", "", "ppo", 0, nullptr);
  admin.rename_run(run, "new");
  admin.set_tag(run, "note", "first");
  admin.set_tag(run, "note", "second");
  admin.set_tag(run, "dataset", "gsm8k");
  admin.set_tag(run, "gone", "x");
  admin.remove_tag(run, "gone");
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->name, "new");
  EXPECT_EQ(reader.run(other)->name, "other");
  EXPECT_THAT(reader.tags(run), ElementsAre(Pair("dataset", "gsm8k"), Pair("note", "second")));
  EXPECT_THAT(reader.tags(other), IsEmpty());
  EXPECT_THAT(error_of([&] { admin.rename_run(run, ""); }), HasSubstr("needs a name"));
  EXPECT_THAT(error_of([&] { admin.set_tag(999, "a", "b"); }), HasSubstr("there is no run 999"));
}

TEST_F(TrackingTest, MarkRunEndedSetsTheStatusAndRecordsTheError) {
  TrackingWriter writer(path());
  TrackingAdmin admin(path());
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  admin.mark_run_ended(run, "interrupted", "stopped by the user from the GUI");
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->status, "interrupted");
  EXPECT_GT(reader.run(run)->end_time, 0);
  const auto events = reader.events(run);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, "error");
  EXPECT_EQ(events[0].text, "stopped by the user from the GUI");
  EXPECT_THAT(error_of([&] { admin.mark_run_ended(run, "failed", "again"); }),
              HasSubstr("already ended as 'interrupted'"));
  EXPECT_THAT(error_of([&] { admin.mark_run_ended(run, "running", ""); }), HasSubstr("not 'running'"));
}

TEST_F(TrackingTest, MarkStaleRunsLeavesRunsOfLiveProcessesAlone) {
  TrackingWriter writer(path());
  const int64_t run = writer.start_run("live", "", "", "ppo", 0, nullptr);
  TrackingAdmin admin(path());
  EXPECT_THAT(admin.mark_stale_runs(), IsEmpty());
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->status, "running");
}

TEST_F(TrackingTest, MarkStaleRunsCatchesAReusedPid) {
  TrackingWriter writer(path());
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  {
    // As if a process that has since died had our pid (a restarted container).
    SQLite::Database db(path(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE runs SET process_start = 'another-boot:12345' WHERE id = " + std::to_string(run));
  }
  TrackingAdmin admin(path());
  EXPECT_THAT(admin.mark_stale_runs("interrupted"), ElementsAre(run));
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->status, "interrupted");
}

TEST_F(TrackingTest, MarkStaleRunsCatchesAnExitedProcess) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    TrackingWriter writer(path());
    writer.start_run("forgotten", "", "", "ppo", 0, nullptr);
    _exit(0);  // never calls end_run
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  TrackingAdmin admin(path());
  EXPECT_THAT(admin.mark_stale_runs(), ElementsAre(1));
}

}  // namespace
}  // namespace rlwb::core
