// rlwb run --resume through the CLI binary, with real processes and a real
// DB: a PPO run (actor, reference, critic, adaptive KL, warm start,
// evaluation, samples) with a checkpoint every 2 steps is killed with
// kill -9 after step 4's checkpoint, resumed, and ends with the metrics of
// every step and the final weights of an uninterrupted run, bit for bit.
#include "core/controller/checkpoint_store.h"
#include "core/tracking/tracking.h"
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

namespace {

std::vector<std::string> ppo_args(const std::string& db) {
  return {"run",
          std::string(rlwb::testing::kSourceDir) + "/experiments/ppo.yaml",
          "--db",
          db,
          "trainer.steps=6",
          "trainer.warm_start.steps=2",
          "trainer.warm_start.batch_size=16",
          "trainer.eval.every=3",
          "trainer.eval.batch_size=16",
          "task.batch_size=16",
          "task.test_size=16",
          "models.actor.config.ppo.mini_batch_size=16",
          "models.critic.config.ppo.mini_batch_size=16",
          "models.actor.config.micro_batch_size=8",
          "models.critic.config.micro_batch_size=8",
          "+trainer.checkpoint.every=2",
          "+trainer.checkpoint.keep=2"};
}

// `rlwb ARGS` started in folder `cwd` (its runs/checkpoints go there); the pid.
pid_t start_cli(const std::vector<std::string>& args, const fs::path& cwd) {
  fs::create_directories(cwd);
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    if (!freopen((cwd / "out.txt").c_str(), "a", stdout) || !freopen((cwd / "err.txt").c_str(), "a", stderr))
      _exit(126);
    std::vector<char*> argv{const_cast<char*>(rlwb::testing::kCliBin)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(rlwb::testing::kCliBin, argv.data());
    _exit(127);
  }
  return pid;
}

int wait_cli(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every metric but the wall-clock ones, by (key, step); a key at a step twice fails.
std::map<std::pair<std::string, int64_t>, double> metrics_of(const std::string& db, int64_t run) {
  std::map<std::pair<std::string, int64_t>, double> out;
  for (auto& p : TrackingReader(db).metrics(run)) {
    // Wall-clock keys, at any prefix (val/, warm_start/): timing_s/, compute_s/, perf/.
    if (p.key.find("timing_s/") != std::string::npos || p.key.find("compute_s/") != std::string::npos ||
        p.key.rfind("perf/", 0) == 0)
      continue;
    EXPECT_TRUE(out.emplace(std::pair(p.key, p.step), p.value).second)
        << p.key << " twice at step " << p.step;
  }
  return out;
}

// The files of the run's final actor save (trainer.save), by name.
std::map<std::string, std::string> final_actor(const std::string& db, int64_t run) {
  std::map<std::string, std::string> files;
  for (auto& a : TrackingReader(db).artifacts(run))
    if (a.kind == "checkpoint" && fs::path(a.path).filename() == "actor") {
      files.clear();
      for (auto& f : fs::directory_iterator(a.path))
        files[f.path().filename().string()] = rlwb::testing::read_bytes(f.path().string());
    }
  return files;
}

bool has_checkpoint_of_step(const std::string& db, int64_t run, int64_t step) {
  try {
    if (!fs::exists(db)) return false;
    for (auto& a : TrackingReader(db).artifacts(run))
      if (a.kind == kResumeCheckpointArtifact && fs::path(a.path).filename() == checkpoint_folder_name(step))
        return true;
  } catch (const std::exception&) {  // the DB is being made
  }
  return false;
}

TEST(ResumeCli, AKilledRunResumedEndsWithTheMetricsAndWeightsOfAnUninterruptedOne) {
  const fs::path root = fs::temp_directory_path() / rlwb::testing::unique_name("rlwb-resume-cli");
  const std::string whole_db = (root / "whole.db").string(), killed_db = (root / "killed.db").string();

  ASSERT_EQ(wait_cli(start_cli(ppo_args(whole_db), root / "whole")), 0)
      << rlwb::testing::read_bytes((root / "whole" / "err.txt").string());

  const pid_t victim = start_cli(ppo_args(killed_db), root / "killed");
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

  auto whole = metrics_of(whole_db, 1), resumed = metrics_of(killed_db, 1);
  EXPECT_GT(whole.size(), 60u);
  ASSERT_EQ(whole.size(), resumed.size());
  for (auto& [key_step, value] : whole) {
    auto other = resumed.find(key_step);
    ASSERT_NE(other, resumed.end()) << key_step.first << " at step " << key_step.second;
    if (std::isnan(value)) continue;
    EXPECT_EQ(value, other->second) << key_step.first << " at step " << key_step.second;
  }
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
