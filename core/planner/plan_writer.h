// A plan written into a graph file: one pool per device set (named after
// its models, `actor_ref`), each model moved to its set's pool with the
// plan's `parallel: {dp, tp, pp}`, and an actor whose generation layout
// differs with `generate: {tp, pp}` (the 3D-HybridEngine). Everything else of the experiment is
// kept as it was. `rlwb plan --write` saves the result with
// experiment_to_yaml(); `rlwb validate` checks it like any file.
#pragma once

#include <string>

#include "core/graph/experiment.h"
#include "core/planner/plan_input.h"
#include "core/planner/planner.h"

namespace rlwb::core::planner {

// The pools' device for plans on `profile`: "cuda" for a GPU profile,
// "cpu" for a calibrated one (worker processes on this host's cores).
std::string pool_device_of(const DeviceProfile& profile);

// Whether plans on `profile` give the actor a generation layout of its own
// unasked: on a CPU profile only. The 3D-HybridEngine runs on cuda pools
// too (allocated buffers, NCCL), but that path has not yet run on a GPU
// (scripts/device_check.sh), so a GPU plan uses it only when asked.
bool plans_generation_layouts(const DeviceProfile& profile);

// `pool_device`: "cpu" or "cuda" (pool_device_of the profile).
Experiment apply_plan(const Experiment& exp, const PlanInput& input, const Plan& plan,
                      const std::string& pool_device);

// The pool name of a set: its models' names joined by '_'.
std::string pool_name_of(const PlanInput& input, const DeviceSet& set);

}  // namespace rlwb::core::planner
