#include "app/catalog.h"

#include "app/registries.h"

#include <algorithm>
#include <filesystem>
#include <thread>

namespace rlwb::app {
namespace {

int count_gpus() {
  // /dev/nvidia0, /dev/nvidia1, ... without loading CUDA in the controller.
  int n = 0;
  while (std::filesystem::exists("/dev/nvidia" + std::to_string(n))) ++n;
  return n;
}

}  // namespace

core::MethodCatalog build_catalog(const workers::RoleRegistry& roles, const core::Builtins& builtins,
                                  const core::tasks::TaskSources& tasks,
                                  const core::RewardTypes* reward_types) {
  core::MethodCatalog catalog;
  for (const auto& [role, spec] : roles.roles())
    for (const auto& m : spec.methods) catalog.role_methods[role][m.name] = m.ports;
  if (reward_types)
    for (const auto& [name, type] : *reward_types) {
      catalog.reward_methods[name] = type.methods;
      if (type.check) catalog.reward_checks[name] = type.check;
    }
  for (const auto& [name, builtin] : builtins) catalog.builtins[name] = builtin.ports;
  for (const auto& [name, task] : tasks) {
    catalog.task_columns[name] = task.columns;
    if (task.check) catalog.task_checks[name] = task.check;
  }
  catalog.machine_gpus = count_gpus();
  // CPU workers may oversubscribe the cores (tests run 4 ranks on 2 cores),
  // but not without bound.
  catalog.machine_cpu_workers = std::max(8u, 4 * std::thread::hardware_concurrency());
  return catalog;
}

core::MethodCatalog catalog() {
  return build_catalog(worker_roles(), builtins(), task_sources(), &reward_types());
}

}  // namespace rlwb::app
