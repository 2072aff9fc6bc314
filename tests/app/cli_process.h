// The process side of the CLI tests of whole runs, without LibTorch (the GUI
// tests use it too): `rlwb ARGS` started from inside a folder (stdout and
// stderr go to <folder>/out.txt and err.txt), its exit, the worker processes
// of a controller, and a bounded wait.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_paths.h"

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

}  // namespace rlwb::testing
