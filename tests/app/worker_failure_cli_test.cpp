// trainer.on_worker_failure: restart through the CLI binary, with real
// worker processes: during one PPO run a worker is killed with kill -9
// after the checkpoint of step 2, and after the restart a worker of the
// new set is stopped with SIGSTOP (a hang: its heartbeats stop). The run
// restarts its workers twice, each time from the newest checkpoint, and
// ends with the metrics and final weights of an undisturbed run, bit for
// bit; no worker is left, and each failure and restart is an event.
// The default (fail) ends the run failed at the first kill.
#include "core/tracking/tracking.h"
#include "tests/app/cli_runs.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/test_files.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace rlwb::core;
using namespace rlwb::testing;

namespace {

int events_starting(const std::string& db, const std::string& prefix) {
  int n = 0;
  for (auto& e : TrackingReader(db).events(1)) n += e.text.rfind(prefix, 0) == 0;
  return n;
}

bool has_events_starting(const std::string& db, const std::string& prefix, int count) {
  try {
    return fs::exists(db) && events_starting(db, prefix) >= count;
  } catch (const std::exception&) {  // the DB is being made
    return false;
  }
}

TEST(WorkerFailureCli, AKilledAndAHungWorkerAreRestartedAndTheRunEndsAsAnUndisturbedOne) {
  const fs::path root = fs::temp_directory_path() / unique_name("rlwb-restart-cli");
  const std::string whole_db = (root / "whole.db").string(), faults_db = (root / "faults.db").string();
  ASSERT_EQ(wait_cli(start_cli(small_ppo_args(whole_db), root / "whole")), 0)
      << read_bytes((root / "whole" / "err.txt").string());

  auto args = small_ppo_args(faults_db);
  args.push_back("+trainer.on_worker_failure=restart");
  args.push_back("+trainer.max_restarts=3");
  const pid_t rlwb = start_cli(args, root / "faults");

  // A death: kill -9 one worker after the first checkpoint.
  ASSERT_TRUE(wait_until([&] { return has_checkpoint_of_step(faults_db, 1, 2); }, 240));
  auto first = worker_processes_of(rlwb);
  ASSERT_FALSE(first.empty());
  kill(*first.rbegin(), SIGKILL);
  ASSERT_TRUE(wait_until(
      [&] { return has_events_starting(faults_db, "restarting the workers (restart 1 of 3)", 1); }, 60));

  // A hang: SIGSTOP one worker of the new set once it trains again.
  ASSERT_TRUE(wait_until([&] { return has_checkpoint_of_step(faults_db, 1, 4); }, 240));
  std::set<pid_t> second;
  ASSERT_TRUE(wait_until(
      [&] {
        second = worker_processes_of(rlwb);
        for (pid_t p : first) second.erase(p);
        return !second.empty();
      },
      30));
  kill(*second.begin(), SIGSTOP);

  ASSERT_EQ(wait_cli(rlwb), 0) << read_bytes((root / "faults" / "err.txt").string());
  TrackingReader reader(faults_db);
  EXPECT_EQ(reader.run(1)->status, "finished");
  EXPECT_EQ(events_starting(faults_db, "worker failure: "), 2);
  EXPECT_EQ(
      events_starting(faults_db, "restarting the workers (restart 2 of 3) from the checkpoint of step 4"), 1);
  std::string hang;
  for (auto& e : reader.events(1))
    if (e.text.rfind("worker failure: ", 0) == 0) hang = e.text;
  EXPECT_NE(hang.find("no heartbeat"), std::string::npos) << hang;
  expect_same_metrics(whole_db, faults_db);
  auto weights = final_actor(whole_db, 1);
  ASSERT_FALSE(weights.empty());
  EXPECT_TRUE(weights == final_actor(faults_db, 1)) << "the final actor's files differ";
  // Nothing is left: every worker any attempt started is gone.
  EXPECT_TRUE(worker_processes_of(rlwb).empty()) << "a worker outlived the run";
  EXPECT_TRUE(fs::is_directory(root / "faults" / "runs" / "logs" / "run-1" / "restart-2"));
  fs::remove_all(root);
}

TEST(WorkerFailureCli, ByDefaultAKilledWorkerFailsTheRunWithItsExit) {
  const fs::path root = fs::temp_directory_path() / unique_name("rlwb-fail-cli");
  const std::string db = (root / "runs.db").string();
  const pid_t rlwb = start_cli(small_ppo_args(db), root / "run");
  ASSERT_TRUE(wait_until([&] { return has_checkpoint_of_step(db, 1, 2); }, 240));
  auto workers = worker_processes_of(rlwb);
  ASSERT_FALSE(workers.empty());
  kill(*workers.begin(), SIGKILL);
  EXPECT_EQ(wait_cli(rlwb), 1);
  TrackingReader reader(db);
  EXPECT_EQ(reader.run(1)->status, "failed");
  EXPECT_EQ(events_starting(db, "restarting the workers"), 0);
  fs::remove_all(root);
}

}  // namespace

// The fault loop scans /proc while workers exit; a process that exits after
// its cmdline was opened must read as gone, not throw out of the scan.
TEST(WorkerFailureCli, AProcFileOfAProcessThatExitedAfterTheOpenReadsAsGone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  std::ifstream cmdline("/proc/" + std::to_string(child) + "/cmdline");
  ASSERT_TRUE(cmdline.is_open());
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(rest_of_proc_file(cmdline), std::nullopt);

  std::ifstream own("/proc/self/cmdline");
  const auto text = rest_of_proc_file(own);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->find("app_tests"), std::string::npos);
}
