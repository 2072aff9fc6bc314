// Every setting of an experiment as typed structs, parsed in one call from
// the loaded graph file (core/graph/experiment.h), with the checks that
// involve more than one setting: batch sizes that divide by the
// data-parallel ranks and by the mini-batch, a mini-batch not above the
// batch, an evaluation that has held-out rows, unknown keys in every map the
// graph file has. The validator reports the problems (rlwb validate, the
// GUI); the controller parses the same experiment and reads only the
// structs.
#pragma once

#include "core/config/model_options.h"
#include "core/config/profile_options.h"
#include "core/config/section.h"
#include "core/config/task_options.h"
#include "core/config/trainer_options.h"
#include "core/graph/experiment.h"

#include <map>
#include <string>

namespace rlwb::core::config {

struct ExperimentOptions {
  TaskOptions task;
  TrainerOptions trainer;
  std::map<std::string, ModelOptions> models;  // by model name
  ProfileOptions profile;
};

ExperimentOptions parse_experiment_options(const Experiment& exp, ParseContext& ctx);
// Throws ConfigError with every problem.
ExperimentOptions parse_experiment_options(const Experiment& exp);

// trainer.steps as the run will read it (its default when absent or bad).
int64_t trainer_steps(const Experiment& exp);

// Every setting with its type, default and meaning, as markdown tables
// (docs/settings.md is this text; a test keeps them equal).
std::string settings_reference();

}  // namespace rlwb::core::config
