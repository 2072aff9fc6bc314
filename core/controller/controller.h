// The single controller: runs one experiment. It checks the settings
// (before anything starts), records the run in the tracking DB, starts the
// worker processes of every pool (WorkerCluster), creates one WorkerGroup
// per model and one module per reward, and hands them to the Trainer,
// which runs the graph once per step through a GraphRunner. At the end the
// run's status (finished / failed / interrupted) and error go into the DB,
// and no worker is left. With trainer.on_worker_failure: restart, a worker
// that dies or hangs ends only the attempt: every worker is stopped, new
// ones start (their logs in <log dir>/restart-<k>) and load the newest good
// checkpoint (or start over without one), the rows after it superseded as
// on a resume; each failure and restart is an event of the run.
//   worker_cluster.h  processes and the RPC endpoint
//   graph_runner.h    one pass of a graph, nodes scheduled by readiness
//   trainer.h         warm start, evaluation, the RL steps, saving
#pragma once

#include "core/config/experiment_options.h"
#include "core/config/launch_options.h"
#include "core/controller/builtins.h"
#include "core/controller/resume.h"
#include "core/controller/reward_module.h"
#include "core/controller/trainer.h"
#include "core/graph/experiment.h"
#include "core/rpc/rpc_server.h"
#include "core/tasks/tasks.h"
#include "core/tracking/tracking.h"

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace rlwb::core {

struct ControllerOptions {
  std::string worker_binary;      // path of rlwb-worker
  std::string run_name;           // default: experiment name
  int64_t from_run = 0;           // the tracked run this one was relaunched from (0: none)
  std::string log_dir;            // worker logs; default: runs/logs/run-<run id>
  std::string transport = "ipc";  // "ipc" (one host) or "tcp"
  config::LaunchOptions launch;   // the launch file: bind address, hosts of the ranks
  RpcOptions rpc;
  std::chrono::milliseconds startup_timeout{60000};
  // What the graph's nodes, task and rewards may name: this build's
  // registries (app/registries.h). Null: none (a graph naming one then
  // fails to start).
  const Builtins* builtins = nullptr;
  const tasks::TaskSources* tasks = nullptr;
  const RewardTypes* reward_types = nullptr;
  // Where trainer.save and the warm start write checkpoints (CheckpointFolders).
  std::string checkpoint_dir = "runs/checkpoints";
  // A stop requested here (Ctrl-C in the CLI) ends the run as
  // 'interrupted' at the next node boundary, with every metric kept.
  std::stop_token stop;
  TrainerHooks hooks;  // progress (the CLI prints it)
  // rlwb run --resume: continue this run (plan_resume checked it) under
  // its id from its checkpoint, instead of starting a new one.
  std::optional<ResumePlan> resume;
};

struct RunResult : TrainingRecord {
  int64_t run_id = 0;
  std::string status;  // finished, failed, interrupted
  std::string error;
};

class Controller {
 public:
  // tracking may be null (no DB: tests of the dataflow alone).
  Controller(Experiment experiment, ControllerOptions options, TrackingWriter* tracking);
  ~Controller();

  // Runs every step. Never throws for a failure of the run itself: the
  // result says failed/interrupted with the error, and so does the DB.
  RunResult run();

 private:
  void attempt(const config::ExperimentOptions& settings, const std::string& log_dir,
               CheckpointFolders& folders, const std::optional<FoundCheckpoint>& from,
               std::vector<std::string>& checkpoints, RunResult& result);
  void restart_from_checkpoint(const std::string& failure, int64_t restart, int64_t allowed,
                               const std::vector<std::string>& checkpoints,
                               std::optional<FoundCheckpoint>& from, RunResult& result);

  Experiment exp_;
  ControllerOptions options_;
  TrackingWriter* tracking_;
};

}  // namespace rlwb::core
