// For the CLI tests of whole runs (resume, restart, export): `rlwb ARGS`
// started from inside a folder, since runs write their run folders and
// checkpoints relative to where rlwb runs (stdout and stderr go to
// <folder>/out.txt and err.txt), and what such a run left in its DB.
#pragma once

#include "core/controller/checkpoint_store.h"
#include "core/tracking/tracking.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rlwb::testing {

// The child's pid; wait_cli reaps it.
inline pid_t start_cli(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  std::filesystem::create_directories(cwd);
  const pid_t pid = fork();
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    if (!freopen((cwd / "out.txt").c_str(), "a", stdout) || !freopen((cwd / "err.txt").c_str(), "a", stderr))
      _exit(126);
    std::vector<char*> argv{const_cast<char*>(kCliBin)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(kCliBin, argv.data());
    _exit(127);
  }
  return pid;
}

// The exit code, or 128 + the signal that ended it.
inline int wait_cli(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A PPO run (actor, reference, critic, adaptive KL, warm start, evaluation,
// samples) of 6 small steps with a checkpoint every 2.
inline std::vector<std::string> small_ppo_args(const std::string& db) {
  return {"run",
          std::string(kSourceDir) + "/experiments/ppo.yaml",
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

// Every metric but the wall-clock ones, by (key, step); a key at a step twice fails.
inline std::map<std::pair<std::string, int64_t>, double> metrics_of(const std::string& db, int64_t run) {
  std::map<std::pair<std::string, int64_t>, double> out;
  for (auto& p : core::TrackingReader(db).metrics(run)) {
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
inline std::map<std::string, std::string> final_actor(const std::string& db, int64_t run) {
  std::map<std::string, std::string> files;
  for (auto& a : core::TrackingReader(db).artifacts(run))
    if (a.kind == "checkpoint" && std::filesystem::path(a.path).filename() == "actor") {
      files.clear();
      for (auto& f : std::filesystem::directory_iterator(a.path))
        files[f.path().filename().string()] = read_bytes(f.path().string());
    }
  return files;
}

// Run 1 of `db` logged the metrics of run 1 of `reference_db`, bit for bit
// (and the reference has more than `at_least` of them).
inline void expect_same_metrics(const std::string& reference_db, const std::string& db,
                                size_t at_least = 60) {
  auto reference = metrics_of(reference_db, 1), other = metrics_of(db, 1);
  EXPECT_GT(reference.size(), at_least);
  ASSERT_EQ(reference.size(), other.size());
  for (auto& [key_step, value] : reference) {
    auto found = other.find(key_step);
    ASSERT_NE(found, other.end()) << key_step.first << " at step " << key_step.second;
    if (std::isnan(value)) continue;
    EXPECT_EQ(value, found->second) << key_step.first << " at step " << key_step.second;
  }
}

// The rest of an open /proc/PID file, or nothing when PID exited after the
// open: the read then fails with ESRCH, which libstdc++'s streambuf throws
// past the stream's exception mask.
inline std::optional<std::string> rest_of_proc_file(std::ifstream& in) {
  try {
    return std::string(std::istreambuf_iterator<char>(in), {});
  } catch (const std::ios_base::failure&) {
    return std::nullopt;
  }
}

// The live rlwb-worker processes of the controller with pid `controller`:
// those whose --controller address names it (its ipc socket is
// /tmp/rlwb-<pid>-...), so they are found after the controller died too.
inline std::set<pid_t> worker_processes_of(pid_t controller) {
  std::set<pid_t> found;
  const std::string needle = "/tmp/rlwb-" + std::to_string(controller) + "-";
  for (auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(entry.path() / "cmdline");
    const auto cmdline = rest_of_proc_file(cmd);
    if (!cmdline) continue;  // it exited between the open and the read
    // A zombie has no cmdline, so whatever matches is alive.
    if (cmdline->find("rlwb-worker") != std::string::npos && cmdline->find(needle) != std::string::npos)
      found.insert(std::stoi(name));
  }
  return found;
}

// Polls `condition` until it holds or `seconds` pass; its last answer.
inline bool wait_until(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

inline bool has_checkpoint_of_step(const std::string& db, int64_t run, int64_t step) {
  try {
    if (!std::filesystem::exists(db)) return false;
    for (auto& a : core::TrackingReader(db).artifacts(run))
      if (a.kind == core::kResumeCheckpointArtifact &&
          std::filesystem::path(a.path).filename() == core::checkpoint_folder_name(step))
        return true;
  } catch (const std::exception&) {  // the DB is being made
  }
  return false;
}

}  // namespace rlwb::testing
