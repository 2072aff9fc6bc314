// The plans a user is shown: search_plans() (planner.h), keeping only the
// plans whose written graph file (apply_plan, plan_writer.h) the validator
// accepts on a machine with the planned devices. A layout the cost model
// likes can still break a rule of another part of the file -- an
// evaluation batch that dp does not divide, say -- and a plan that cannot
// run is no answer. `rlwb plan` (app/cmd_plan.cpp) and the editor's Plan
// panel (ui/graph/plan_session.h) both search through here.
#pragma once

#include "core/graph/experiment.h"
#include "core/planner/plan_input.h"
#include "core/planner/planner.h"
#include "core/validate/validator.h"

namespace rlwb::core::planner {

// The best `wanted` plans that validate, best first, among the best
// wanted * 8 + 32 the search finds (options.keep is not used). `catalog` is the validator's (this
// build's); its machine capacity is raised to options.devices, so only the
// rules of the file are checked, not this machine. Throws PlanError when no
// plan fits (search_plans) or every plan that fits breaks a rule (the
// message quotes the first such rule).
PlanSearch search_valid_plans(const Experiment& exp, const PlanInput& input, const DeviceProfile& profile,
                              const PlanOptions& options, const MethodCatalog& catalog, int wanted);

}  // namespace rlwb::core::planner
