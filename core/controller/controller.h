// The single controller: runs one experiment's dataflow graph once per
// step. It launches the worker processes of every pool (core/launch),
// creates one WorkerGroup per model, and then, each step, starts every node
// whose input columns exist -- so independent nodes on different pools run
// at the same time -- and merges each node's output columns into the step's
// Batch. Builtin nodes and reward-module nodes run in this process. Around
// the steps, the trainer section adds phases: a warm start (SFT, then a
// checkpoint copied into other models), held-out evaluation, samples, and
// final checkpoints (docs/rl.md). Everything is recorded in the tracking DB:
// the run, its params, timing_s/<node>, the nodes' metrics, events, samples,
// artifacts and the final status (finished / failed / interrupted).
#pragma once

#include "core/controller/reward_module.h"
#include "core/graph/experiment.h"
#include "core/rpc/worker_group.h"
#include "core/tracking/tracking.h"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace rlwb::core {

struct ControllerOptions {
  std::string worker_binary;      // path of rlwb-worker
  std::string run_name;           // default: experiment name
  std::string log_dir;            // worker logs; default: runs/logs/<run id>
  std::string transport = "ipc";  // "ipc" (one host) or "tcp"
  RpcOptions rpc;
  std::chrono::milliseconds startup_timeout{60000};
  bool print_progress = true;  // one line per step on stderr
  // The reward module types the graph's `rewards:` may use (rewards/);
  // null: none (a graph with rewards then fails to start).
  const RewardTypes* reward_types = nullptr;
  // Where trainer.save and the warm start write checkpoints:
  // <checkpoint_dir>/run-<id>-<start time>-<pid>/<model>.
  std::string checkpoint_dir = "runs/checkpoints";
};

// When one node ran within a step (seconds since the run started).
struct NodeSpan {
  std::string node;
  double start = 0, end = 0;
};

struct StepReport {
  int64_t step = 0;
  double seconds = 0;
  std::vector<NodeSpan> spans;
  std::map<std::string, double> metrics;
  Batch batch;  // every column the step produced
};

// A held-out evaluation (trainer.eval): the mean score over the test split.
struct EvalReport {
  int64_t step = 0;  // 0: before the first RL step (after the warm start)
  double score = 0;  // mean over rows of each row's summed score
  int64_t rows = 0;
};

struct RunResult {
  int64_t run_id = 0;
  std::vector<EvalReport> evals;
  std::map<std::string, std::string> checkpoints;  // model -> directory saved at the end
  std::string status;                              // finished, failed, interrupted
  std::string error;
  std::vector<StepReport> steps;
};

class Controller {
 public:
  // tracking may be null (no DB: tests of the dataflow alone).
  Controller(Experiment experiment, ControllerOptions options, TrackingWriter* tracking);
  ~Controller();

  // Runs every step. Never throws for a failure of the run itself: the
  // result says failed/interrupted with the error, and so does the DB.
  RunResult run();

  // Called after each step (the CLI's progress bar, tests).
  std::function<void(const StepReport&)> on_step;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::core
