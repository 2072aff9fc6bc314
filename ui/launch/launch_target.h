// Where the GUI runs an experiment. The launch screen talks only to this
// interface: "local" runs it on this machine, "remote" on an SSH host
// (`rlwb run --remote`, mirrored into the local DB; docs/launching.md).
//
// A launch runs the CLI (`rlwb run FILE overrides --db DB --name NAME`), so a
// run started from the GUI is the same run as one started from a terminal,
// tracked in the same DB. Stopping asks the controller to stop (SIGTERM: it
// stops its workers and records the run as interrupted); kill() is the last
// resort.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/launch/remote_host.h"

namespace rlwb::ui {

struct LaunchRequest {
  std::string cli;  // path of rlwb
  std::string experiment_file;
  std::vector<std::string> overrides;  // key.path=value
  std::string db;
  std::string name;         // run name ("" : the experiment's)
  int64_t from_run = 0;     // the run relaunched (rlwb run --from-run); 0: none
  core::RemoteHost remote;  // host "": this machine
};

// A worker process of the running controller, as the OS sees it.
struct WorkerProcess {
  std::string group;
  int rank = -1;
  pid_t pid = 0;
  char state = '?';  // R running, S sleeping, Z zombie, ...
  double cpu_seconds = 0;
  double log_age_seconds = -1;  // since its log file last changed (-1: no log)
};

class LaunchTarget {
 public:
  virtual ~LaunchTarget() = default;
  virtual std::string name() const = 0;
  // Starts the controller; throws std::runtime_error when it cannot.
  virtual void start(const LaunchRequest& request) = 0;
  virtual void poll() = 0;                // once a frame: notices the end
  virtual bool active() const = 0;        // started and not ended
  virtual std::string state() const = 0;  // "running", "stopping", "exited with code 0", ...
  virtual int exit_code() const = 0;      // -1 while running or when killed
  virtual pid_t controller_pid() const = 0;
  virtual std::vector<WorkerProcess> workers(const std::string& log_dir) const = 0;
  virtual std::string log_tail(size_t max_bytes) const = 0;  // the controller's output
  virtual void stop() = 0;
  virtual void kill() = 0;
};

std::vector<std::string> launch_target_names();  // {"local", "remote"}
// Throws std::invalid_argument for an unknown name. Logs go to `log_dir`.
std::unique_ptr<LaunchTarget> make_launch_target(const std::string& name, const std::string& log_dir);
// ui/launch/remote_target.cpp: the CLI with --remote, run here; its workers
// are on the host, Stop and Kill reach the run there.
std::unique_ptr<LaunchTarget> make_remote_target(std::unique_ptr<LaunchTarget> local);

// The argv the CLI is run with (for the screen to show, and tests).
std::vector<std::string> launch_argv(const LaunchRequest& request);
// "trainer.steps=2 task.batch_size=4" -> {"trainer.steps=2", "task.batch_size=4"}.
std::vector<std::string> split_overrides(const std::string& text);

}  // namespace rlwb::ui
