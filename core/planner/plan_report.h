// The plans as `rlwb plan` prints them: a summary line of the search, then
// per plan its placement (sets with their devices and models' layouts),
// the simulated step time and throughput, each node's time (start, compute,
// communication, overhead) and each set's memory per device.
#pragma once

#include <string>

#include "core/planner/plan_input.h"
#include "core/planner/planner.h"

namespace rlwb::core::planner {

// One line: "{actor,ref}x4 (tp2 dp2 | ...)": each set's models, devices and layouts.
std::string placement_summary(const PlanInput& input, const Plan& plan);

std::string plan_report(const PlanInput& input, const PlanSearch& search, const DeviceProfile& profile,
                        int devices);

}  // namespace rlwb::core::planner
