// Task "arithmetic": prompts like "37+48=" with the answer "85", for the
// default experiment (the actor learns to add with a character tokenizer;
// the math reward checks answers). Task settings:
//   batch_size (16)        distinct prompts per step
//   samples_per_prompt (1) each prompt repeated n times in a row (GRPO groups)
//   max_operand (99)       operands are 0..max_operand
//   ops (["+"])            any of + - *
//   test_size (200)        held-out prompts (split "test"), never trained on
//   teacher_carry_error (0) the demonstrations (`answers`, for the SFT warm
//                          start) come from a sloppy teacher who forgets to
//                          carry the one from the units into the tens with
//                          this probability: 48+37= -> 75. The verifier's
//                          ground_truth is always right, so RL can do better
//                          than the imitated teacher.
// Columns: prompts, answers (the teacher's), ground_truth (objects),
// group_index [rows] int64 (the prompt's index within the step), and two
// preference pairs per prompt, for reward and cost models that learn
// (reward_model.update, cost_model.update; docs/rl.md):
//   chosen / rejected      the right answer over a sloppy one (the carry
//                          forgotten where the sum carries, else one off
//                          in the units or the tens)
//   unsafe_response /      Safe-RLHF's harmfulness stand-in: an answer
//   safe_response          with the digit 7 in it is unsafe (as
//                          experiments/safe_rlhf.yaml's rule has it). A right
//                          answer that holds a 7 is paired with the same
//                          answer with each 7 made an 8; one without, with
//                          the same answer with one digit made a 7.
// A problem's pairs depend only on the problem, so they draw nothing from
// the generator the prompts and the teacher use.
// The held-out set depends only on the settings, not on the seed; the
// training prompts of a step depend on the seed and the step.
#pragma once

#include "core/tasks/task_source.h"

namespace rlwb::core::tasks {

Batch arithmetic_task(const config::TaskOptions& task, const TaskDraw& draw, int64_t seed);
extern const std::vector<std::string> kArithmeticColumns;

}  // namespace rlwb::core::tasks
