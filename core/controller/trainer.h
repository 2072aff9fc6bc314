// The RL trainer: the loop around the graph, as verl's fit() reads --
//   warm start (supervised steps, then a checkpoint copied into the models
//   that start from it); evaluate; for each step: run the graph on the
//   task's batch, log its metrics and samples, evaluate every N steps;
//   save a resumable checkpoint every trainer.checkpoint.every steps
//   (checkpoint_store.h); save the models named in trainer.save. A trainer
//   resumed from a checkpoint skips the warm start and the first
//   evaluation and continues with the step after the checkpoint's.
// Everything goes into the tracking DB (when there is one); progress is
// reported through TrainerHooks (the CLI prints it, tests watch it). A stop
// request ends the current pass (StopRequested); the caller records it.
#pragma once

#include "core/config/experiment_options.h"
#include "core/controller/checkpoint_store.h"
#include "core/controller/graph_runner.h"
#include "core/controller/task_prefetch.h"
#include "core/tasks/tasks.h"
#include "core/tracking/tracking.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

class RunProfiler;
class WeightLinks;

// A held-out evaluation (trainer.eval): the mean score over the test split.
struct EvalReport {
  int64_t step = 0;  // 0: before the first RL step (after the warm start)
  double score = 0;  // mean over rows of each row's summed score
  int64_t rows = 0;
};

// What a run reports as it goes. Every hook is optional and runs on the
// trainer's thread.
struct TrainerHooks {
  std::function<void(int64_t step, int64_t steps, const std::map<std::string, double>& metrics)>
      warm_start_step;
  std::function<void(const EvalReport&)> evaluated;
  // After each RL step, with the latest evaluation (if any yet).
  std::function<void(const StepReport&, const std::optional<EvalReport>& last_eval)> step_done;
};

struct TrainingRecord {
  std::vector<EvalReport> evals;
  std::vector<StepReport> steps;
  std::map<std::string, std::string> checkpoints;  // model -> directory saved at the end
};

// Where a run's checkpoints go: <root>/run-<id>-<start time>-<pid>/<name>,
// unique even when two runs with different tracking DBs (same run id) run
// at once. The run's folder is made on first use.
class CheckpointFolders {
 public:
  CheckpointFolders(std::string root, int64_t run_id) : root_(std::move(root)), run_id_(run_id) {}
  std::string path(const std::string& name);

 private:
  std::string root_, run_folder_;
  int64_t run_id_;
};

class Trainer {
 public:
  // `tracking` may be null; `run_id` is the run's id in it (0 without).
  Trainer(const Experiment& exp, const config::ExperimentOptions& settings, const tasks::TaskSources& tasks,
          GraphRunner& runner, NodeTargets& targets, TrackingWriter* tracking, int64_t run_id,
          CheckpointFolders& folders, TrainerHooks hooks);

  // The whole training; fills `record` as it goes, so what was done before
  // a failure or a stop is kept. Throws on failure and StopRequested.
  void fit(TrainingRecord& record);
  // Before fit(): continue from `checkpoint` (of this run): every model's
  // ranks load their state from it and the builtins' state is put back.
  // `earlier`: the run's older checkpoints, oldest first (for keep).
  void resume_from(const FoundCheckpoint& checkpoint, std::vector<std::string> earlier = {});
  // This run's resumable checkpoints on disk, oldest first.
  const std::vector<std::string>& checkpoints() const { return checkpoints_; }
  // With a profiler (profile.enabled), the RL steps it names are profiled.
  void set_profiler(RunProfiler* profiler) { profiler_ = profiler; }
  // Models that generate on a pool of their own (weight_links.h) get the
  // actor's weights before the first evaluation or step and after every
  // RL step (inside the step's time).
  void set_weight_links(WeightLinks* links) { links_ = links; }

 private:
  void warm_start();
  void rl_steps(TrainingRecord& record, int64_t steps, int64_t eval_every);
  std::optional<EvalReport> evaluate(int64_t step);
  // `last`: no step follows (nothing to prefetch).
  StepReport rl_step(int64_t step, bool last);
  void log_samples(const StepReport& r);
  std::map<std::string, std::string> save_models();
  void save_resume_checkpoint(int64_t step);

  Batch task_batch(const tasks::TaskDraw& draw) const;
  // Step `step`'s batch (prefetched when it is ready), and unless it is the
  // last step the next one's prefetched; `draw_of` gives a step's draw.
  Batch step_batch(const std::function<tasks::TaskDraw(int64_t)>& draw_of, int64_t step, bool last);
  WorkerGroup& model(const std::string& name, const std::string& where);
  void log_metrics(const std::map<std::string, double>& metrics, int64_t step,
                   const std::string& prefix = "");
  void event(const std::string& text);

  const Experiment& exp_;
  const config::ExperimentOptions& settings_;
  const tasks::TaskSources& tasks_;
  GraphRunner& runner_;
  NodeTargets& targets_;
  TrackingWriter* tracking_;
  int64_t run_id_;
  CheckpointFolders& folders_;
  TrainerHooks hooks_;
  RunProfiler* profiler_ = nullptr;
  WeightLinks* links_ = nullptr;
  std::vector<NodeSpec> warm_start_nodes_, eval_nodes_;  // from trainer.warm_start / trainer.eval
  int64_t resumed_step_ = 0;                             // the checkpoint's step; 0: a fresh start
  std::vector<std::string> checkpoints_;                 // this run's, oldest first (trainer.checkpoint.keep)
  // The next step's task batch, drawn while this step runs. Last member:
  // destroyed first, its thread joined before what task_batch reads goes.
  TaskPrefetch prefetch_{[this](const tasks::TaskDraw& draw) { return task_batch(draw); }};
};

}  // namespace rlwb::core
