// The graph validator: every problem of an experiment -- its structure, its
// settings (core/config, parsed as the run will parse them), the dataflow
// between nodes, the trainer phases, the resources -- each with file, line,
// node and a hint, before anything starts. `rlwb validate`, `rlwb run`, the
// GUI editor and the tests use it. Checks live one family per file
// (checks.h).
#pragma once

#include "core/config/task_options.h"
#include "core/graph/experiment.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace rlwb::core {

// A reward type's check of a reward's settings (`rewards.<name>.config`),
// without starting anything: throws std::exception whose message starts
// with the key it is about ("rewards.<name>.config.<key>: ...").
using RewardSettingsCheck = std::function<void(const RewardSpec& spec, const Experiment& exp)>;
// A task source's check of what its files hold (core/tasks/tasks.h).
using TaskInputCheck = std::function<void(const config::TaskOptions& task)>;

// What the validator may accept: methods (with their ports, MethodPorts in
// core/graph/ports.h) per worker role and per reward type, builtins the
// controller runs, columns the task provides at the start of each step, and
// the machine's capacity. Built at the composition root (app/catalog.h, from
// the registries in app/registries.h).
struct MethodCatalog {
  std::map<std::string, MethodPorts> role_methods;           // role -> methods
  std::map<std::string, MethodPorts> reward_methods;         // reward type -> methods
  std::map<std::string, RewardSettingsCheck> reward_checks;  // by reward type
  MethodPorts builtins;
  std::map<std::string, std::vector<std::string>> task_columns;  // task name -> columns
  std::map<std::string, TaskInputCheck> task_checks;             // task name -> its input check
  int machine_gpus = 0;
  int machine_cpu_workers = 64;  // most CPU worker processes we allow
};

// Every problem in the experiment, in file order (issues without a line
// last); no errors (has_errors() false) when it can run.
std::vector<GraphIssue> validate_experiment(const Experiment& exp, const MethodCatalog& catalog);

}  // namespace rlwb::core
