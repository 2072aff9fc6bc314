// The planner: HybridFlow's Algorithm 1 over RLWB's cost model. For an
// experiment (PlanInput) on `devices` devices of one profile it
//   1. enumerates every placement: the set partitions of the models
//      (set_partitions.h; colocated models share a set's devices);
//   2. finds each set's smallest device count whose models fit in memory
//      side by side (memory_model.h), and enumerates the allocations of all
//      devices to the sets from those minimums up, in steps of `unit`
//      devices (1 up to 32 devices; beyond, the smallest power of two that
//      leaves at most 32 steps, so 4 on 128 devices);
//   3. gives each model of a set its layout (model_layout.h): among the
//      layouts that fit, the combination with the least total stage time
//      of the set's models (the fastest few of each model are combined);
//   4. simulates the step (step_simulation.h) and ranks the plans by it.
// Sets get consecutive devices in set order. The search is exhaustive
// over placements and allocations; per (set, device count) the layout
// choice is computed once.
#pragma once

#include <string>
#include <vector>

#include "core/planner/device_profile.h"
#include "core/planner/memory_model.h"
#include "core/planner/model_layout.h"
#include "core/planner/plan_input.h"
#include "core/planner/step_simulation.h"

namespace rlwb::core::planner {

struct PlanOptions {
  int devices = 1;
  int nodes = 0;  // 0: devices / profile.devices_per_node, rounded up
  int max_pp = 1;
  bool generation_layouts = false;
  int keep = 10;  // plans returned, best first
};

struct DeviceSet {
  std::vector<int> models;  // indices into PlanInput::models
  int first_device = 0, devices = 0;
  double memory_per_device = 0;  // bytes, colocated (set_memory)
};

struct Plan {
  std::vector<DeviceSet> sets;
  std::vector<int> set_of_model;     // by model index
  std::vector<ModelLayout> layouts;  // by model index
  std::vector<MemoryUse> memory;     // by model index, per device
  StepEstimate step;
  double tokens_per_second = 0;  // prompt + response tokens of the step's rows over its time
};

struct PlanSearch {
  std::vector<Plan> plans;    // best first, at most options.keep
  int placements = 0;         // set partitions
  long long allocations = 0;  // (placement, device counts) simulated
  int unit = 1;               // devices per allocation step
  double seconds = 0;         // wall time of the search
};

// Throws PlanError when no plan fits: the message gives each model's
// smallest need per device (or that it has no layout on the devices) and
// what to change.
PlanSearch search_plans(const PlanInput& input, const DeviceProfile& profile, const PlanOptions& options);

// The simulated step of one given placement and layouts (the planner's
// own evaluation, for comparing with a measured run).
Plan evaluate_plan(const PlanInput& input, const DeviceProfile& profile, const PlanOptions& options,
                   const std::vector<int>& set_of_model, const std::vector<int>& set_devices,
                   const std::vector<ModelLayout>& layouts);

}  // namespace rlwb::core::planner
