// Demo roles: small, deterministic worker methods that exercise every
// dispatch mode, c10d collectives and failure paths. The built-in demo
// graph (experiments/demo.yaml) and the runtime tests use them; the model
// roles (actor, critic, ...) register the same way.
#pragma once

#include "workers/method_registry.h"

namespace rlwb::workers {

// Registers role "demo" with methods square, negate, tag_rank, mesh_coords,
// first_rank, everyone, per_rank_echo, global_sum, expand, fail, crash, sleep.
void register_demo_roles(RoleRegistry& registry);

}  // namespace rlwb::workers
