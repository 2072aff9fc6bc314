#include "app/worker_roles.h"

#include "workers/roles/demo_roles.h"
#include "workers/roles/model_roles.h"

namespace rlwb::app {

const workers::RoleRegistry& worker_roles() {
  static const workers::RoleRegistry registry = [] {
    workers::RoleRegistry r;
    workers::register_demo_roles(r);
    workers::roles::register_policy_roles(r);
    workers::roles::register_value_roles(r);
    return r;
  }();
  return registry;
}

}  // namespace rlwb::app
