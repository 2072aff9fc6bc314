// rlwb run --resume through the CLI binary, with real processes and a real
// DB: a PPO run (actor, reference, critic, adaptive KL, warm start,
// evaluation, samples) with a checkpoint every 2 steps is killed with
// kill -9 after step 4's checkpoint, resumed, and ends with the metrics of
// every step and the final weights of an uninterrupted run, bit for bit.
#include "core/controller/checkpoint_store.h"
#include "core/tracking/tracking.h"
#include "tests/app/cli_runs.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/run_program.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <thread>

namespace fs = std::filesystem;
using namespace rlwb::core;
using namespace rlwb::testing;

namespace {

TEST(ResumeCli, AKilledRunResumedEndsWithTheMetricsAndWeightsOfAnUninterruptedOne) {
  const fs::path root = fs::temp_directory_path() / rlwb::testing::unique_name("rlwb-resume-cli");
  const std::string whole_db = (root / "whole.db").string(), killed_db = (root / "killed.db").string();

  ASSERT_EQ(wait_cli(start_cli(small_ppo_args(whole_db), root / "whole")), 0)
      << rlwb::testing::read_bytes((root / "whole" / "err.txt").string());

  const pid_t victim = start_cli(small_ppo_args(killed_db), root / "killed");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (!has_checkpoint_of_step(killed_db, 1, 4) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(has_checkpoint_of_step(killed_db, 1, 4)) << "no checkpoint of step 4 came";
  kill(victim, SIGKILL);
  EXPECT_EQ(wait_cli(victim), 128 + SIGKILL);
  EXPECT_EQ(TrackingReader(killed_db).run(1)->status, "running");  // as a dead controller leaves it

  ASSERT_EQ(wait_cli(start_cli({"run", "--resume", "1", "--db", killed_db}, root / "resumed")), 0)
      << rlwb::testing::read_bytes((root / "resumed" / "err.txt").string());
  TrackingReader reader(killed_db);
  EXPECT_EQ(reader.run(1)->status, "finished");
  EXPECT_EQ(reader.list_runs().size(), 1u);  // the same run, not a new one
  bool resumed_event = false;
  for (auto& e : reader.events(1)) resumed_event |= e.text.find("resumed from the checkpoint of step 4") == 0;
  EXPECT_TRUE(resumed_event);

  expect_same_metrics(whole_db, killed_db);
  auto weights = final_actor(whole_db, 1);
  ASSERT_FALSE(weights.empty());
  EXPECT_TRUE(weights == final_actor(killed_db, 1)) << "the final actor's files differ";

  // Bad input: a finished run cannot be resumed; the DB is left as it was.
  auto finished =
      rlwb::testing::run_program(rlwb::testing::kCliBin, {"run", "--resume", "1", "--db", killed_db});
  EXPECT_EQ(finished.code, 2);
  EXPECT_NE(finished.err.find("finished; there is nothing to resume"), std::string::npos) << finished.err;
  EXPECT_EQ(TrackingReader(killed_db).run(1)->status, "finished");
  fs::remove_all(root);
}

}  // namespace
