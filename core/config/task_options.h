// The task section of the graph file (task: {name, ...}) as a typed struct:
// the settings every task has, and those of each built-in task source
// (core/controller's arithmetic, print_program, toy_numbers). Parsed by the
// validator before anything starts and by the controller from the same
// function; the task sources read only this struct.
#pragma once

#include "core/config/section.h"

#include <string>
#include <vector>

namespace rlwb::core::config {

struct ArithmeticTaskOptions {
  int64_t max_operand = 99;
  std::vector<std::string> ops = {"+"};
  int64_t test_size = 200;
  double teacher_carry_error = 0.0;
};

struct PrintProgramTaskOptions {
  int64_t max_target = 99;
  int64_t test_size = 20;
  double teacher_error = 0.0;
};

struct TaskOptions {
  std::string name;
  int64_t batch_size = 16;         // distinct prompts per step
  int64_t samples_per_prompt = 1;  // responses per prompt (GRPO's group size)
  ArithmeticTaskOptions arithmetic;
  PrintProgramTaskOptions print_program;
  int64_t rows_per_step() const { return batch_size * samples_per_prompt; }
  int64_t test_size() const;  // the held-out split's size (0 for a task without one)
};

// The names of the built-in tasks.
const std::vector<std::string>& task_names();

TaskOptions parse_task_options(const nlohmann::json& task, ParseContext& ctx);

}  // namespace rlwb::core::config
