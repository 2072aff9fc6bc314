// The launch screen: run the open experiment with overrides on a launch
// target (this machine, or an SSH host), follow the controller's state, its
// worker processes and its output, stop it cleanly, and jump to the run's
// dashboard.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ui/graph/graph_editor.h"
#include "ui/launch/launch_target.h"
#include "ui/runs/run_store.h"
#include "ui/runs/runs_views.h"

namespace rlwb::ui {

struct LaunchState {
  std::string target_name = "local";
  std::unique_ptr<LaunchTarget> target;
  std::string cli;                        // rlwb
  std::string log_dir = "runs/logs/gui";  // the controller's own output
  std::string overrides_text;             // "trainer.steps=50 task.batch_size=4"
  std::string run_name;
  core::RemoteHost remote;  // the "remote" target's host, folder, rlwb there, ssh config
  std::string status;
  std::vector<std::string> last_argv;
  pid_t launched_pid = 0;
  double launched_at = 0;              // unix seconds
  int64_t newest_run_at_launch = 0;    // a remote launch's run is a newer one, tagged with its host
  int64_t run_id = 0;                  // the tracking run of the launch, once it shows up
  std::vector<WorkerProcess> workers;  // refreshed twice a second
  double workers_at = 0;
};

void draw_launch(LaunchState& state, GraphEditor& editor, RunStore& store, ViewRequests& requests);
// Polls the target (call every frame, whatever screen is shown).
void update_launch(LaunchState& state, RunStore& store);

}  // namespace rlwb::ui
