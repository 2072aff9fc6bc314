// Local launcher: starts worker processes on this machine, sends their
// output to one log file each, watches them, and makes sure none outlives
// the launcher -- on success, on error and on Ctrl-C:
//   - each child asks the kernel for SIGKILL when the launcher dies
//     (PR_SET_PDEATHSIG), so even a SIGKILLed controller leaves no orphan;
//   - each child runs in its own process group, so the terminal's Ctrl-C
//     reaches only the controller, which then stops the children in order;
//   - stop_all() sends SIGTERM, waits a bounded time, then SIGKILL.
// Used by the controller (core/controller) and tests. No LibTorch.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rlwb::core {

struct ProcessSpec {
  std::string name;                        // e.g. "main/0": used in messages and log file name
  std::vector<std::string> argv;           // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;  // added to the launcher's environment
};

struct ProcessExit {
  std::string name;
  pid_t pid = 0;
  int exit_code = -1;            // when exited normally
  int signal = 0;                // when killed by a signal
  std::string describe() const;  // "exited with code 3" / "killed by signal 9 (Killed)"
};

class LocalLauncher {
 public:
  explicit LocalLauncher(std::string log_dir);
  ~LocalLauncher();  // stop_all()
  LocalLauncher(const LocalLauncher&) = delete;
  LocalLauncher& operator=(const LocalLauncher&) = delete;

  // Starts the process; throws std::runtime_error if it cannot be started.
  pid_t start(const ProcessSpec& spec);

  // Reaps children that ended since the last call (non-blocking).
  std::vector<ProcessExit> poll_exits();

  // SIGTERM to every live child, wait up to `grace`, then SIGKILL and reap.
  void stop_all(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));

  std::string log_path(const std::string& name) const;
  // Last `max_bytes` of a child's log (for error messages and the GUI).
  std::string log_tail(const std::string& name, size_t max_bytes = 4000) const;
  std::vector<pid_t> live_pids() const;

 private:
  std::string log_dir_;
  mutable std::mutex mu_;
  std::map<pid_t, std::string> live_;  // pid -> name
};

// Ctrl-C / SIGTERM handling for a command-line run: the first signal sets a
// flag that the run loop polls (interrupt_requested()); work then stops at
// the next safe point and cleans up. A second Ctrl-C exits at once after
// killing the children recorded by any live LocalLauncher.
void install_interrupt_handler();
bool interrupt_requested();
void clear_interrupt();

}  // namespace rlwb::core
