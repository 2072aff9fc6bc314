// The plans as `rlwb plan` prints them (and the editor's Plan panel shows
// them, ui/graph/plan_panel.h): a summary line of the search, then per plan
// its placement (sets with their devices and models' layouts), the
// simulated step time and throughput, each node's time (start, compute,
// communication, overhead) and each set's memory per device.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/planner/plan_input.h"
#include "core/planner/planner.h"

namespace rlwb::core::planner {

// "17.38 ms", "12.0 us", "1.250 s": a simulated time as the report prints it.
std::string seconds_text(double seconds);
// "16.3 MiB", "72.0 GiB": memory per device.
std::string bytes_text(double bytes);
// "dp2 tp1 pp1" (", generates at tp1 pp1" when the actor samples in another layout).
std::string layout_text(const PlannedModel& model, const ModelLayout& layout);

// One line: "{actor,ref}x4 (tp2 dp2 | ...)": each set's models, devices and layouts.
std::string placement_summary(const PlanInput& input, const Plan& plan);

// Two lines, the report's first: what was searched (models, devices,
// profile, placements, allocations, time) and the workload of one step.
std::string search_summary(const PlanInput& input, const PlanSearch& search, const DeviceProfile& profile,
                           int devices);

// One plan as `rlwb plan --json` prints it: placement, step_seconds,
// tokens_per_second, sets (pool, devices, memory_per_device, models with
// dp/tp/pp/generate_tp/generate_pp/memory_bytes) and stages (node, set,
// start, seconds, compute, communication).
nlohmann::json plan_json(const PlanInput& input, const Plan& plan);

std::string plan_report(const PlanInput& input, const PlanSearch& search, const DeviceProfile& profile,
                        int devices);

}  // namespace rlwb::core::planner
