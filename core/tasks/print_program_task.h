// Task "print_program": the prompt is a number ("42"); the model must write
// a python3 program that prints it ("print(6*7)", "print(40+2)",
// "print(42)"), judged by the code reward in the sandbox
// (experiments/grpo_code.yaml). Task settings:
//   batch_size (16)         distinct targets per step
//   samples_per_prompt (1)  each prompt repeated n times in a row (GRPO groups)
//   max_target (99)         targets are 0..max_target
//   test_size (20)          held-out targets (split "test"), never trained on
//   teacher_error (0)       the demonstrations (`answers`, for the SFT warm
//                           start) come from a sloppy teacher whose program,
//                           with this probability, prints a neighbour of the
//                           target or misses its closing parenthesis. The
//                           tests are always right, so RL can do better than
//                           the imitated teacher.
// Columns: prompts, answers (the teacher's programs), tests
// ([{"expected": "42\n"}], the code reward's form), ground_truth ("42")
// (objects), group_index [rows] int64 (the prompt's index within the step).
// The held-out set depends only on the settings, not on the seed.
#pragma once

#include "core/tasks/task_source.h"

namespace rlwb::core::tasks {

Batch print_program_task(const config::TaskOptions& task, const TaskDraw& draw, int64_t seed);
extern const std::vector<std::string> kPrintProgramColumns;

}  // namespace rlwb::core::tasks
