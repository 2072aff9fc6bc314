// The composition root's registries: what this build offers a graph file
// on the controller's side.
// Each part of RLWB defines its pieces (roles in workers/roles, builtins in
// core/controller, task sources in core/tasks, reward types in
// rewards/modules); only here are they put together, so no library
// includes the registry of another. rlwb, rlwb-worker, rlwb-gui, the
// benchmarks and the tests take them from here.
#pragma once

#include "core/controller/builtins.h"
#include "core/controller/controller.h"
#include "core/controller/reward_module.h"
#include "core/tasks/tasks.h"
#include "app/worker_roles.h"

namespace rlwb::app {

// worker_roles(): app/worker_roles.h
const core::Builtins& builtins();                // builtin.<name>
const core::tasks::TaskSources& task_sources();  // task.name
const core::RewardTypes& reward_types();         // rewards.<name>.type

// ControllerOptions with this build's builtins, tasks and reward types.
core::ControllerOptions controller_options();

}  // namespace rlwb::app
