// The task sources a graph's `task: {name: ...}` may name: each makes the
// batch a step starts with, from the typed task settings (core/config) and
// a TaskDraw (which split, how many prompts, how many samples each).
//   arithmetic     "37+48=" -> "85" (arithmetic_task.h)
//   print_program  a number -> a python3 program printing it (print_program_task.h)
//   toy_numbers    x = step * batch_size + i (model-free demo graphs)
//   dataset        verl-format Parquet / JSON Lines files (dataset_task.h)
//   humaneval      HumanEval's Python problems with their tests (humaneval_task.h)
// Used by the controller and by the validator's catalog (app/catalog.cpp).
#pragma once

#include "core/batch/batch.h"
#include "core/config/task_options.h"
#include "core/tasks/task_source.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rlwb::core::tasks {

using TaskFn = std::function<Batch(const config::TaskOptions& task, const TaskDraw& draw, int64_t seed)>;

struct TaskSpec {
  TaskFn make;
  std::vector<std::string> columns;  // what it provides (for the validator)
  // Checks what only the task's own inputs can tell (its files), before
  // anything starts; throws with a message that names the file, row and
  // column. Empty for a task whose settings say it all.
  std::function<void(const config::TaskOptions& task)> check;
};

// The task sources of a build, by name; assembled at the composition root
// (app/registries.h).
using TaskSources = std::map<std::string, TaskSpec>;

// toy_numbers: x = step * batch_size + i and a text prompt per row.
TaskSpec toy_numbers_task();

}  // namespace rlwb::core::tasks
