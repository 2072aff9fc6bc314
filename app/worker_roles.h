// The roles this build's workers host (actor, critic, reference, reward and
// cost models, the demo roles), put together here, at the composition root:
// workers/ defines each role and the registry type but knows no list of them.
// rlwb-worker serves them; the controller side's catalog lists them.
#pragma once

#include "workers/method_registry.h"

namespace rlwb::app {

const workers::RoleRegistry& worker_roles();

}  // namespace rlwb::app
