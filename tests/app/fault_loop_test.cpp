// Faults in a loop: 20 short GRPO runs (the actor and the reference
// tensor-parallel over two workers; two shards of 10, so ctest can run them
// side by side), each disturbed once at a random moment after its
// first checkpoint by one of
//   - kill -9 of a random worker      (on_worker_failure restart mends it)
//   - SIGSTOP of a random worker      (a hang: heartbeats stop; restart)
//   - kill -9 of the controller       (then rlwb run --resume RUN)
// Every run must end finished with the metrics of an undisturbed run, bit
// for bit (so no metric row before the last checkpoint is lost and none is
// doubled), leave no worker process behind, and leave a DB that passes
// PRAGMA integrity_check. The random choices come from a fixed seed per
// shard, printed with each run, so a failure can be replayed.
#include "core/tracking/tracking.h"
#include "tests/app/cli_runs.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/test_files.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <filesystem>
#include <random>
#include <set>
#include <thread>

namespace fs = std::filesystem;
using namespace rlwb::core;
using namespace rlwb::testing;

namespace {

// Tensor-parallel rather than data-parallel: split over two dp ranks, rows
// this few can come back from generate with prompt widths that differ, which
// Batch::concat refuses (an open bug, see the issue notes).
std::vector<std::string> tiny_grpo_args(const std::string& db) {
  return {"run",
          std::string(kSourceDir) + "/experiments/grpo_tp.yaml",
          "--db",
          db,
          "trainer.steps=6",
          "trainer.warm_start.steps=2",
          "trainer.warm_start.batch_size=8",
          "trainer.eval.every=3",
          "trainer.eval.batch_size=8",
          "task.batch_size=4",
          "task.samples_per_prompt=2",
          "task.test_size=8",
          "models.actor.config.ppo.mini_batch_size=8",
          "models.actor.config.micro_batch_size=8",
          "+trainer.checkpoint.every=2",
          "+trainer.checkpoint.keep=2",
          "+trainer.on_worker_failure=restart",
          "+trainer.max_restarts=2"};
}

enum class Fault { kKillWorker, kStopWorker, kKillController };
const char* fault_name(Fault f) {
  return f == Fault::kKillWorker   ? "kill -9 a worker"
         : f == Fault::kStopWorker ? "SIGSTOP a worker"
                                   : "kill -9 the controller";
}

class FaultLoop : public ::testing::TestWithParam<int> {};

TEST_P(FaultLoop, EveryDisturbedRunEndsAsTheUndisturbedOne) {
  const int shard = GetParam();
  const fs::path root = fs::temp_directory_path() / unique_name("rlwb-fault-loop");
  const std::string reference_db = (root / "reference.db").string();
  ASSERT_EQ(wait_cli(start_cli(tiny_grpo_args(reference_db), root / "reference")), 0)
      << read_bytes((root / "reference" / "err.txt").string());
  const auto reference_weights = final_actor(reference_db, 1);
  ASSERT_FALSE(reference_weights.empty());

  std::mt19937 random(20261202 + shard);
  for (int i = 0; i < 10; ++i) {
    const Fault fault = static_cast<Fault>(random() % 3);
    const int delay_ms = static_cast<int>(random() % 400);
    const unsigned victim = random();
    SCOPED_TRACE("shard " + std::to_string(shard) + " run " + std::to_string(i) + ": " + fault_name(fault) +
                 " " + std::to_string(delay_ms) + " ms after the first checkpoint");
    const fs::path folder = root / ("run-" + std::to_string(i));
    const std::string db = (folder / "runs.db").string();
    pid_t rlwb = start_cli(tiny_grpo_args(db), folder);
    ASSERT_TRUE(wait_until([&] { return has_checkpoint_of_step(db, 1, 2); }, 120));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    std::vector<pid_t> controllers = {rlwb};
    if (fault == Fault::kKillController) {
      kill(rlwb, SIGKILL);
      EXPECT_EQ(wait_cli(rlwb), 128 + SIGKILL);
      // Its workers go with it (PR_SET_PDEATHSIG).
      EXPECT_TRUE(wait_until([&] { return worker_processes_of(rlwb).empty(); }, 10)) << "orphan workers";
      if (TrackingReader(db).run(1)->status != "finished") {  // else it had ended already
        rlwb = start_cli({"run", "--resume", "1", "--db", db}, folder);
        controllers.push_back(rlwb);
        EXPECT_EQ(wait_cli(rlwb), 0) << read_bytes((folder / "err.txt").string());
      }
    } else {
      std::set<pid_t> workers = worker_processes_of(rlwb);
      if (!workers.empty()) {
        auto it = workers.begin();
        std::advance(it, victim % workers.size());
        kill(*it, fault == Fault::kKillWorker ? SIGKILL : SIGSTOP);
      }
      EXPECT_EQ(wait_cli(rlwb), 0) << read_bytes((folder / "err.txt").string());
    }
    EXPECT_EQ(TrackingReader(db).run(1)->status, "finished");
    expect_same_metrics(reference_db, db, 20);
    EXPECT_TRUE(final_actor(db, 1) == reference_weights) << "the final actor's files differ";
    for (pid_t controller : controllers)
      EXPECT_TRUE(worker_processes_of(controller).empty()) << "a worker outlived its run";
    SQLite::Database file(db, SQLite::OPEN_READONLY);
    EXPECT_EQ(file.execAndGet("PRAGMA integrity_check").getString(), "ok");
    if (HasFailure()) break;  // the folder is kept for a look
    fs::remove_all(folder);
  }
  if (!HasFailure()) fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(TwentyRuns, FaultLoop, ::testing::Values(0, 1));

}  // namespace
