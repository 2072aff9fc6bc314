#include "core/planner/step_simulation.h"

#include <algorithm>
#include <map>

namespace rlwb::core::planner {

StepEstimate simulate_step(const PlanInput& input, const std::vector<int>& set_of_model,
                           const std::vector<StageTime>& times) {
  StepEstimate step;
  std::map<int, double> set_free;
  for (std::size_t i = 0; i < input.stages.size(); ++i) {
    const Stage& stage = input.stages[i];
    StageEstimate e;
    e.node = stage.node;
    e.kind = stage.kind;
    e.set = stage.model >= 0 ? set_of_model[stage.model] : -1;
    e.time = times[i];
    for (int a : stage.after) e.start = std::max(e.start, step.stages[a].end());
    if (e.set >= 0) {
      e.start = std::max(e.start, set_free[e.set]);
      set_free[e.set] = e.end();
    }
    step.seconds = std::max(step.seconds, e.end());
    step.stages.push_back(e);
  }
  return step;
}

}  // namespace rlwb::core::planner
