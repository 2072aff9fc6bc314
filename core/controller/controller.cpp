#include "core/controller/controller.h"

#include "core/config/experiment_options.h"
#include "core/controller/graph_runner.h"
#include "core/controller/run_profiler.h"
#include "core/controller/worker_cluster.h"
#include "core/rpc/protocol.h"

namespace rlwb::core {
namespace {

std::vector<ClusterPool> cluster_pools(const Experiment& exp) {
  std::vector<ClusterPool> pools;
  for (auto& [name, pool] : exp.pools) pools.push_back({name, pool.workers, pool.device});
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
    auto group = std::make_unique<WorkerGroup>(rpc, name, model.role, model.pool, mesh);
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

}  // namespace

Controller::Controller(Experiment experiment, ControllerOptions options, TrackingWriter* tracking)
    : exp_(std::move(experiment)), options_(std::move(options)), tracking_(tracking) {}

Controller::~Controller() = default;

RunResult Controller::run() {
  RunResult result;
  if (options_.resume) {
    result.run_id = options_.resume->run_id;
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
  auto event = [&](const std::string& text) {
    if (tracking_ && result.run_id) tracking_->log_event(result.run_id, "info", "controller", text);
  };
  try {
    config::ExperimentOptions settings = config::parse_experiment_options(exp_);  // before anything starts
    ClusterOptions cluster;
    cluster.worker_binary = options_.worker_binary;
    cluster.transport = options_.transport;
    cluster.launch = options_.launch;
    cluster.rpc = options_.rpc;
    // Between processes of one host, big tensors go through shared memory.
    if (cluster.transport == "ipc" && cluster.rpc.wire.shm_threshold_bytes == 0)
      cluster.rpc.wire.shm_threshold_bytes = 1u << 20;
    cluster.log_dir =
        options_.log_dir.empty() ? "runs/logs/run-" + std::to_string(result.run_id) : options_.log_dir;
    cluster.startup_timeout = options_.startup_timeout;
    cluster.stop = options_.stop;
    WorkerCluster workers(cluster_pools(exp_), cluster);
    event("started " + std::to_string(workers.worker_count()) + " worker processes; logs in " +
          workers.log_dir());
    NodeTargets targets = make_targets(exp_, workers.rpc(), options_.reward_types);
    static const Builtins no_builtins;
    static const tasks::TaskSources no_tasks;
    GraphRunner runner(targets, options_.builtins ? *options_.builtins : no_builtins, settings.trainer,
                       result.run_id, options_.stop);
    CheckpointFolders folders(options_.checkpoint_dir, result.run_id);
    Trainer trainer(exp_, settings, options_.tasks ? *options_.tasks : no_tasks, runner, targets, tracking_,
                    result.run_id, folders, options_.hooks);
    if (options_.resume) trainer.resume_from(options_.resume->checkpoint, options_.resume->earlier);
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
    trainer.fit(result);
    result.status = "finished";
    // Leaving the scope: the models go, then the workers.
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

}  // namespace rlwb::core
