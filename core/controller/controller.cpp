#include "core/controller/controller.h"

#include "core/config/experiment_options.h"
#include "core/controller/graph_runner.h"
#include "core/controller/run_profiler.h"
#include "core/controller/weight_links.h"
#include "core/controller/worker_cluster.h"
#include "core/common/scheduler_slice.h"
#include "core/rpc/protocol.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace rlwb::core {
namespace {

std::vector<ClusterPool> cluster_pools(const Experiment& exp) {
  std::vector<ClusterPool> pools;
  for (auto& [name, pool] : exp.pools) pools.push_back({name, pool.workers, pool.device, pool.threads});
  return pools;
}

// One WorkerGroup per model (its role created on every rank), one module per reward.
NodeTargets make_targets(const Experiment& exp, RpcServer& rpc, const RewardTypes* reward_types) {
  NodeTargets targets;
  for (auto& [name, model] : exp.models) {
    const PoolSpec& pool = exp.pools.at(model.pool);
    Mesh mesh{model.parallel.dp, model.parallel.pp, model.parallel.tp};
    if (mesh.world() != pool.workers)
      throw std::runtime_error("model '" + name + "': dp*pp*tp = " + std::to_string(mesh.world()) +
                               " but pool '" + pool.name + "' has " + std::to_string(pool.workers) +
                               " workers");
    const ParallelSpec& p = model.parallel;
    std::optional<Mesh> generation;  // the 3D-HybridEngine's replicas (validated: it exists)
    if (p.has_generation_layout()) {
      generation = generation_mesh(mesh, p.generation_pp(), p.generation_tp());
      if (!generation)
        throw std::runtime_error("model '" + name +
                                 "': its generation layout has no mesh of replicas (run rlwb validate)");
    }
    auto group = std::make_unique<WorkerGroup>(rpc, name, model.role, model.pool, mesh, generation);
    group->init(model.config);
    targets.models[name] = std::move(group);
  }
  for (auto& [name, spec] : exp.rewards) {
    if (!reward_types || !reward_types->count(spec.type))
      throw std::runtime_error("reward '" + name + "' has type '" + spec.type +
                               "', which this controller does not know (types come from rewards/)");
    targets.rewards[name] = reward_types->at(spec.type).create(spec, exp, *reward_types);
  }
  return targets;
}

// A failure of the run that a restart can mend: a worker process died or
// stopped answering (RpcServer saw it go), as opposed to a method that
// failed on a live worker, which would fail again.
class WorkerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The dead workers' ids and reasons, "" when every worker is alive.
std::string dead_workers(RpcServer& rpc) {
  std::string dead;
  for (const auto& w : rpc.workers())
    if (!w.alive) dead += (dead.empty() ? "" : "; ") + w.id + ": " + w.death_reason;
  return dead;
}

// The rows of an attempt that a restart from `step` repeats.
void drop_after(RunResult& result, int64_t step) {
  std::erase_if(result.steps, [&](const StepReport& s) { return s.step > step; });
  std::erase_if(result.evals, [&](const EvalReport& e) { return e.step > (step == 0 ? -1 : step); });
}

}  // namespace

Controller::Controller(Experiment experiment, ControllerOptions options, TrackingWriter* tracking)
    : exp_(std::move(experiment)), options_(std::move(options)), tracking_(tracking) {}

Controller::~Controller() = default;

// One start of the workers, and the training from `from` (or from the
// beginning). `checkpoints` is this run's, oldest first, in and out: a
// failed attempt leaves the ones it wrote there for the next.
void Controller::attempt(const config::ExperimentOptions& settings, const std::string& log_dir,
                         CheckpointFolders& folders, const std::optional<FoundCheckpoint>& from,
                         std::vector<std::string>& checkpoints, RunResult& result) {
  auto event = [&](const std::string& text) {
    if (tracking_ && result.run_id) tracking_->log_event(result.run_id, "info", "controller", text);
  };
  // Before the RPC endpoint starts its threads: they inherit it (scheduler_slice.h).
  request_short_scheduler_slice();
  ClusterOptions cluster;
  cluster.worker_binary = options_.worker_binary;
  cluster.transport = options_.transport;
  cluster.launch = options_.launch;
  cluster.rpc = options_.rpc;
  // Between processes of one host, big tensors go through shared memory.
  if (cluster.transport == "ipc" && cluster.rpc.wire.shm_threshold_bytes == 0)
    cluster.rpc.wire.shm_threshold_bytes = 1u << 20;
  cluster.log_dir = log_dir;
  cluster.startup_timeout = options_.startup_timeout;
  cluster.stop = options_.stop;
  WorkerCluster workers(cluster_pools(exp_), cluster);
  event("started " + std::to_string(workers.worker_count()) + " worker processes; logs in " +
        workers.log_dir());
  // Every failure from here on is checked for a dead worker.
  try {
    NodeTargets targets = make_targets(exp_, workers.rpc(), options_.reward_types);
    static const Builtins no_builtins;
    static const tasks::TaskSources no_tasks;
    GraphRunner runner(targets, options_.builtins ? *options_.builtins : no_builtins, settings.trainer,
                       result.run_id, options_.stop);
    Trainer trainer(exp_, settings, options_.tasks ? *options_.tasks : no_tasks, runner, targets, tracking_,
                    result.run_id, folders, options_.hooks);
    WeightLinks links(exp_, settings.models, targets,
                      [&](const std::string& name, int ranks) { return workers.serve_store(name, ranks); });
    trainer.set_weight_links(&links);
    if (from) {
      // The ones before it (newer ones were damaged), for trainer.checkpoint.keep.
      std::vector<std::string> earlier(checkpoints.begin(),
                                       std::find(checkpoints.begin(), checkpoints.end(), from->dir));
      trainer.resume_from(*from, earlier);
    }
    std::unique_ptr<RunProfiler> profiler;
    if (settings.profile.enabled) {
      std::vector<std::string> ids;
      for (auto& [name, pool] : exp_.pools)
        for (int r = 0; r < pool.workers; ++r) ids.push_back(worker_id(name, r));
      profiler =
          std::make_unique<RunProfiler>(settings.profile, exp_, settings.trainer.steps, workers.rpc(), ids,
                                        tracking_, result.run_id, workers.log_dir(), runner.start_time());
      trainer.set_profiler(profiler.get());
    }
    try {
      trainer.fit(result);
    } catch (...) {
      checkpoints = trainer.checkpoints();
      throw;
    }
    // Leaving the scope: the models go, then the workers.
  } catch (const StopRequested&) {
    throw;
  } catch (const std::exception& e) {
    if (options_.stop.stop_requested()) throw;
    // A worker's death often reaches its peers first (a collective's
    // connection reset) and the RPC a moment later: the exit is seen within
    // milliseconds, a hang within dead_after. Only then is it no worker's fault.
    std::string dead = dead_workers(workers.rpc());
    const auto deadline = std::chrono::steady_clock::now() + options_.rpc.dead_after;
    while (dead.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      dead = dead_workers(workers.rpc());
    }
    if (!dead.empty()) throw WorkerFailure(std::string(e.what()) + " [dead: " + dead + "]");
    throw;
  }
}

RunResult Controller::run() {
  RunResult result;
  std::optional<FoundCheckpoint> from;
  std::vector<std::string> checkpoints;  // oldest first
  if (options_.resume) {
    result.run_id = options_.resume->run_id;
    from = options_.resume->checkpoint;
    checkpoints = options_.resume->earlier;
    checkpoints.push_back(from->dir);
    if (tracking_) {
      for (const auto& why : options_.resume->checkpoint.skipped)
        tracking_->log_event(result.run_id, "warning", "controller", "skipped a damaged checkpoint: " + why);
      tracking_->resume_run(result.run_id, options_.resume->checkpoint.manifest.step,
                            options_.resume->checkpoint.dir);
    }
  } else if (tracking_) {
    result.run_id = tracking_->start_run(options_.run_name.empty() ? exp_.name : options_.run_name, exp_.file,
                                         exp_.text, exp_.algorithm, exp_.seed, exp_.raw, options_.from_run);
  }
  try {
    config::ExperimentOptions settings = config::parse_experiment_options(exp_);  // before anything starts
    const std::string log_dir =
        options_.log_dir.empty() ? "runs/logs/run-" + std::to_string(result.run_id) : options_.log_dir;
    CheckpointFolders folders(options_.checkpoint_dir, result.run_id);
    for (int64_t restarts = 0;; ++restarts) {
      try {
        attempt(settings, restarts == 0 ? log_dir : log_dir + "/restart-" + std::to_string(restarts), folders,
                from, checkpoints, result);
        break;
      } catch (const WorkerFailure& e) {
        const auto& trainer = settings.trainer;
        if (trainer.on_worker_failure != config::WorkerFailurePolicy::kRestart ||
            restarts >= trainer.max_restarts)
          throw;
        restart_from_checkpoint(e.what(), restarts + 1, trainer.max_restarts, checkpoints, from, result);
      }
    }
    result.status = "finished";
  } catch (const StopRequested& e) {
    result.status = "interrupted";
    result.error = e.what();
  } catch (const std::exception& e) {
    // A stop during start-up is an interruption too.
    result.status = options_.stop.stop_requested() ? "interrupted" : "failed";
    result.error = e.what();
  }
  // end_run records the error (if any) as an event with the final status.
  if (tracking_) tracking_->end_run(result.run_id, result.status, result.error);
  return result;
}

// trainer.on_worker_failure restart: the failure and the restart are
// events; the rows after the checkpoint are superseded, as a resume does.
void Controller::restart_from_checkpoint(const std::string& failure, int64_t restart, int64_t allowed,
                                         const std::vector<std::string>& checkpoints,
                                         std::optional<FoundCheckpoint>& from, RunResult& result) {
  std::vector<std::string> newest_first(checkpoints.rbegin(), checkpoints.rend());
  std::vector<std::string> skipped;
  from = newest_good_checkpoint(newest_first, &skipped);
  const int64_t step = from ? from->manifest.step : 0;
  drop_after(result, step);
  if (!tracking_) return;
  tracking_->log_event(result.run_id, "error", "controller", "worker failure: " + failure);
  for (const auto& why : skipped)
    tracking_->log_event(result.run_id, "warning", "controller", "skipped a damaged checkpoint: " + why);
  tracking_->log_event(
      result.run_id, "warning", "controller",
      "restarting the workers (restart " + std::to_string(restart) + " of " + std::to_string(allowed) +
          ") from " + (from ? "the checkpoint of step " + std::to_string(step) : std::string("the start")));
  tracking_->resume_run(result.run_id, step, from ? from->dir : "");
}

}  // namespace rlwb::core
