// The profile section of the graph file: whether and what the profiler
// records (docs/profiler.md). Off by default; `rlwb run FILE
// profile.enabled=true [profile.steps=10-20]` turns it on for one run. Used
// by the validator and the controller.
#pragma once

#include "core/config/section.h"
#include "core/profile/step_range.h"

#include <algorithm>
#include <string>

namespace rlwb::core::config {

// Who records the workers' operators: RLWB's context tree, or torch's own
// profiler (Kineto), whose Chrome trace each worker writes next to its log
// -- for comparing the two (bench_profiler) and for users who want Kineto's trace.
enum class ProfileEngine { rlwb, kineto };

struct ProfileOptions {
  bool enabled = false;
  ProfileEngine engine = ProfileEngine::rlwb;
  std::string steps;              // as written; "" : every RL step
  profile::StepRange step_range;  // parsed from `steps`
  // One step in `every` of the range is profiled (the first of the range,
  // then every `every`-th): operator callbacks cost a profiled step tens of
  // percent on small operators, so by default a run pays a few percent.
  int64_t every = 10;
  int64_t window = 0;             // profiled steps per stored context tree; 0: one tree for all
  bool shapes = true;             // input shapes of the operators
  bool native_stacks = false;     // native frames between a method and its operators
  bool trace = false;             // every operator call as an event, for the trace export
  bool hardware_counters = true;  // cycles and instructions per method, where perf_event_open allows
  bool profiles(int64_t step) const {
    return enabled && step_range.contains(step) && (step - step_range.first) % every == 0;
  }
  // The last step profiles() accepts in a run of `steps` steps (0: none).
  int64_t last_profiled_step(int64_t steps) const {
    const int64_t last = step_range.last == 0 ? steps : std::min(step_range.last, steps);
    if (last < step_range.first) return 0;
    return last - (last - step_range.first) % every;
  }
};

ProfileOptions parse_profile_options(const nlohmann::json& profile, ParseContext& ctx);

}  // namespace rlwb::core::config
