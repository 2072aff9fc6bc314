// One step of the graph on a placement, simulated: each stage runs on its
// model's device set once every stage it waits for has ended and its set
// is free -- colocated stages run one after another (a worker process runs
// one call at a time), stages on different sets overlap where the graph
// allows. Controller stages (rewards, builtins) take no device time.
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
  StageTime time;
  double end() const { return start + time.total(); }
};

struct StepEstimate {
  double seconds = 0;
  std::vector<StageEstimate> stages;  // in PlanInput::stages order
};

// `set_of_model[m]`: the set model m runs on; `times[i]`: stage i's time.
StepEstimate simulate_step(const PlanInput& input, const std::vector<int>& set_of_model,
                           const std::vector<StageTime>& times);

}  // namespace rlwb::core::planner
