// The model roles of RLHF, registered into the worker's RoleRegistry:
//   actor, reference                  (policy_roles.cpp)
//   critic, reward_model, cost_model  (value_roles.cpp)
// Each file's header lists its methods, dispatch modes and columns.
#pragma once

#include "workers/method_registry.h"

namespace rlwb::workers::roles {

void register_policy_roles(RoleRegistry& registry);
void register_value_roles(RoleRegistry& registry);

}  // namespace rlwb::workers::roles
