// The validator's catalog for this build: every registered role's methods,
// the reward types' and the controller's builtins, each with its ports, the
// task sources, and this machine's capacity.
// Used by the CLI (rlwb run / validate), the GUI and tests.
#pragma once

#include "core/controller/reward_module.h"
#include "core/graph/experiment.h"
#include "workers/method_registry.h"

namespace rlwb::workers {

// reward_types: the reward module types graphs may declare (rewards/); null
// when this program has none.
core::MethodCatalog build_catalog(const RoleRegistry& registry = builtin_roles(),
                                  const core::RewardTypes* reward_types = nullptr);

}  // namespace rlwb::workers
