#include "workers/catalog.h"

#include "core/controller/builtins.h"
#include "core/tasks/tasks.h"

#include <filesystem>
#include <thread>

namespace rlwb::workers {

static int count_gpus() {
  // /dev/nvidia0, /dev/nvidia1, ... without loading CUDA in the controller.
  int n = 0;
  while (std::filesystem::exists("/dev/nvidia" + std::to_string(n))) ++n;
  return n;
}

core::MethodCatalog build_catalog(const RoleRegistry& registry, const core::RewardTypes* reward_types) {
  core::MethodCatalog catalog;
  for (const auto& [role, spec] : registry.roles())
    for (const auto& m : spec.methods) catalog.role_methods[role][m.name] = m.ports;
  if (reward_types)
    for (const auto& [name, type] : *reward_types) catalog.reward_methods[name] = type.methods;
  for (const auto& [name, builtin] : core::builtin_nodes()) catalog.builtins[name] = builtin.ports;
  for (auto& [name, task] : core::tasks::task_sources()) catalog.task_columns[name] = task.columns;
  catalog.machine_gpus = count_gpus();
  // CPU workers may oversubscribe the cores (tests run 4 ranks on 2 cores),
  // but not without bound.
  catalog.machine_cpu_workers = std::max(8u, 4 * std::thread::hardware_concurrency());
  return catalog;
}

}  // namespace rlwb::workers
