// What a worker call costs on this machine whatever its rows, measured by
// running the experiment itself (`rlwb plan --calibrate FILE`).
//
// The planner prices a stage by its FLOPs, memory traffic and operator
// count. A call also costs the RPC (dispatch, the batch over the wire,
// collect) and the role's own work around the model's operators (reading
// the columns, tokenizing, masks, finding shared prompts, detokenizing),
// which none of those counts see. Measured before this existed, the
// default experiment on one worker: gen / ref / update took 23.3 / 20.1 /
// 60.5 ms at 256 rows and 40.7 / 35.3 / 110 ms at 512 -- 5-11 ms a call
// that does not shrink with the rows, where the profile assumed 1 ms; the
// data-parallel plans, whose ranks each pay it on fewer rows, were
// simulated 20-39% too fast.
//
// Here the experiment runs for real, its models on one worker process (the
// planner's one-device plan), a few steps without warm start, evaluation or
// saving, one optimizer step an epoch (ppo.mini_batch_size 0), at the
// task's batch size and at a quarter of it. For each node on a worker, the
// median of the method's own seconds on the worker (compute_s/<node>)
// after the first step gives a line over the rows; its intercept plus the
// call's round trip (the least any node waited beyond its own seconds) is
// the node's fixed cost. Not dispatch to collect (timing_s/<node>): the
// graph hands one worker two calls at once (ref and values, both updates),
// and the second's timing holds the first's -- the planner's simulation
// serialises them itself, so the calibration measured actor_update at
// twice critic_update where the two cost the same. A stage kind's fixed
// cost (generate, forward, train: the planner's) is the mean of its
// nodes'; call_overhead_s, for any other, the mean of all. The slope
// between the two batch sizes over the slope of the planner's own compute
// for that node on the same one-device plan is the node's compute scale
// (DeviceProfile::compute_scale), which the planner applies in every
// layout (dp divides the rows, tp the matmuls, as before).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>

#include "core/graph/experiment.h"
#include "core/planner/device_profile.h"

namespace rlwb::app {

struct CallCost {
  double mean_fixed_s = 0;                      // over the worker nodes
  std::map<std::string, double> by_stage;       // "generate", "forward", "train": the mean of their nodes'
  std::map<std::string, double> compute_scale;  // by node: measured per-row seconds over modelled
  nlohmann::json measured;  // {rows: [small, big], nodes: {node: {kind, seconds: [..], fixed_seconds}}}
};

// `profile` plans the one-device layout; `worker_binary` is rlwb-worker.
// Throws std::runtime_error naming what failed (no one-device plan, a run
// that did not finish, a graph without worker nodes).
CallCost measure_call_cost(const core::Experiment& exp, const core::planner::DeviceProfile& profile,
                           const std::string& worker_binary);

}  // namespace rlwb::app
