#include "core/planner/step_simulation.h"

#include <algorithm>
#include <limits>
#include <map>

namespace rlwb::core::planner {

StepEstimate simulate_step(const PlanInput& input, const std::vector<int>& set_of_model,
                           const std::vector<StageTime>& times, const std::vector<int>& set_devices,
                           int concurrent_devices) {
  const std::size_t n = input.stages.size();
  StepEstimate step;
  step.stages.resize(n);
  std::vector<double> left(n);   // full-speed seconds still to run
  std::vector<int> state(n, 0);  // 0 waiting, 1 running, 2 done
  std::map<int, bool> set_busy;
  for (std::size_t i = 0; i < n; ++i) {
    const Stage& stage = input.stages[i];
    StageEstimate& e = step.stages[i];
    e.node = stage.node;
    e.kind = stage.kind;
    e.set = stage.model >= 0 ? set_of_model[stage.model] : -1;
    e.time = times[i];
    left[i] = times[i].total();
  }
  double now = 0;
  std::size_t done = 0;
  while (done < n) {
    // Start what can start, in order: inputs done and its set free.
    for (std::size_t i = 0; i < n; ++i) {
      if (state[i] != 0) continue;
      bool ready = true;
      for (int a : input.stages[i].after) ready = ready && state[a] == 2;
      const int set = step.stages[i].set;
      if (!ready || (set >= 0 && set_busy[set])) continue;
      state[i] = 1;
      step.stages[i].start = now;
      if (set >= 0) set_busy[set] = true;
    }
    // The running stages' speed.
    int busy_devices = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (state[i] == 1 && step.stages[i].set >= 0 && concurrent_devices > 0)
        busy_devices += set_devices.at(step.stages[i].set);
    const double rate = concurrent_devices > 0 && busy_devices > concurrent_devices
                            ? double(concurrent_devices) / busy_devices
                            : 1.0;
    // Advance to the first end.
    double dt = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i)
      if (state[i] == 1) dt = std::min(dt, left[i] / (step.stages[i].set >= 0 ? rate : 1.0));
    now += dt;
    for (std::size_t i = 0; i < n; ++i) {
      if (state[i] != 1) continue;
      const double r = step.stages[i].set >= 0 ? rate : 1.0;
      left[i] -= dt * r;
      if (left[i] <= 1e-12 * std::max(1.0, times[i].total())) {
        state[i] = 2;
        ++done;
        step.stages[i].seconds = now - step.stages[i].start;
        if (step.stages[i].set >= 0) set_busy[step.stages[i].set] = false;
      }
    }
  }
  for (const auto& e : step.stages) step.seconds = std::max(step.seconds, e.end());
  return step;
}

}  // namespace rlwb::core::planner
