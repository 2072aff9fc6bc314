// Reward type "code": runs each response as a program in the sandbox
// (rlwb-sandbox, docs/sandbox.md) against the row's test cases and scores
// it by the sandbox's judge: the pass rate, or 1/0 when all tests must pass.
// The module starts its own rlwb-sandbox service when it is created and
// stops it when destroyed, or connects to a running one (`address`). A
// batch goes to the service at once, so its executors judge rows in
// parallel; rows with the same program and tests are judged once. Config (docs/rewards.md):
//   language (python3 | bash | c | cpp, python3)    scoring (pass_rate | all_or_nothing)
//   comparison (lines | tokens | exact, lines)       stop_at_first_failure (bool)
//   extract (auto | fenced | raw, auto)  the program: the last ``` block (auto: else the whole text)
//   limits, compile_limits  ({wall_ms, cpu_ms, memory_mb, ...} as sandbox/limits.h)
//   address  | sandbox_binary, executors (0: one per CPU)
//   timeout_s (300: bound on one batch)   startup_timeout_s (30)
// Ports: in response_text, tests, response_mask, and optionally
// program_prefix (code put before the response's program: HumanEval's
// prompt, so that a completion of the function's body runs); a row's tests are
// [{"stdin": ..., "expected": ...} | {"assert": ...}, ...] (the sandbox's own
// form) or {"inputs": [...], "outputs": [...]} (APPS style), or that JSON
// as a string. Out token_level_scores, reward_details {verdict, score,
// passed, total, failing_test, detail, stderr}.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType code_reward_type();

}  // namespace rlwb::rewards
