// One step of the graph on a placement, simulated: each stage runs on its
// model's device set once every stage it waits for has ended and its set
// is free -- colocated stages run one after another (a worker process runs
// one call at a time), stages on different sets overlap where the graph
// allows. Controller stages (rewards, builtins) take no device time.
//
// On a host whose devices share fewer cores (profile.concurrent_devices
// C > 0), the stages running at one moment share them: while the sets of
// the running stages hold B > C devices in all, each runs at C/B of its
// speed (a fluid model of the scheduler). C = 0 (GPUs): no sharing.
#pragma once

#include <string>
#include <vector>

#include "core/planner/plan_input.h"
#include "core/planner/stage_cost.h"

namespace rlwb::core::planner {

struct StageEstimate {
  std::string node;
  StageKind kind = StageKind::kController;
  int set = -1;  // device set; -1 for the controller
  double start = 0;
  StageTime time;      // at full speed
  double seconds = 0;  // start to end, slowed by sharing cores
  double end() const { return start + seconds; }
};

struct StepEstimate {
  double seconds = 0;
  std::vector<StageEstimate> stages;  // in PlanInput::stages order
};

// `set_of_model[m]`: the set model m runs on; `times[i]`: stage i's time
// at full speed; `set_devices[s]`: the devices of set s (used only when
// concurrent_devices > 0).
StepEstimate simulate_step(const PlanInput& input, const std::vector<int>& set_of_model,
                           const std::vector<StageTime>& times, const std::vector<int>& set_devices = {},
                           int concurrent_devices = 0);

}  // namespace rlwb::core::planner
