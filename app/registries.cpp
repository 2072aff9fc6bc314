#include "app/registries.h"

#include "core/controller/rl_builtins.h"
#include "core/tasks/arithmetic_task.h"
#include "core/tasks/print_program_task.h"
#include "rewards/modules/reward_types.h"

namespace rlwb::app {

const core::Builtins& builtins() {
  static const core::Builtins nodes = [] {
    core::Builtins b;
    core::add_basic_builtins(b);
    core::add_rl_builtins(b);
    return b;
  }();
  return nodes;
}

const core::tasks::TaskSources& task_sources() {
  static const core::tasks::TaskSources tasks = {
      {"toy_numbers", core::tasks::toy_numbers_task()},
      {"arithmetic", {core::tasks::arithmetic_task, core::tasks::kArithmeticColumns}},
      {"print_program", {core::tasks::print_program_task, core::tasks::kPrintProgramColumns}},
  };
  return tasks;
}

const core::RewardTypes& reward_types() { return rewards::builtin_reward_types(); }

core::ControllerOptions controller_options() {
  core::ControllerOptions o;
  o.builtins = &builtins();
  o.tasks = &task_sources();
  o.reward_types = &reward_types();
  return o;
}

}  // namespace rlwb::app
