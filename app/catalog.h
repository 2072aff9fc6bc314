// The validator's catalog for this build: every registered role's methods,
// the reward types' and the builtins, each with its ports, the task
// sources, and this machine's capacity. Used by the CLI (rlwb run /
// validate), the GUI and tests.
#pragma once

#include "core/controller/builtins.h"
#include "core/controller/reward_module.h"
#include "core/tasks/tasks.h"
#include "core/validate/validator.h"
#include "workers/method_registry.h"

namespace rlwb::app {

// From the given registries; reward_types may be null (no rewards).
core::MethodCatalog build_catalog(const workers::RoleRegistry& roles, const core::Builtins& builtins,
                                  const core::tasks::TaskSources& tasks,
                                  const core::RewardTypes* reward_types);

// From this build's registries (app/registries.h).
core::MethodCatalog catalog();

}  // namespace rlwb::app
