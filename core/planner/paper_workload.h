// The HybridFlow paper's PPO experiment as a PlanInput (section 8.1): four
// Llama models of one size -- actor, critic, reference, reward -- and the
// graph gen -> {ref, values, reward} -> advantages -> {critic update,
// actor update}; 1024 prompts of 1024 tokens, 1024-token responses, one
// PPO epoch of 8 updates (mini-batches of 128), micro-batches of 8. Used by
// bench/bench_planner.cpp and the planner's tests, without a graph file.
#pragma once

#include <string>

#include "core/planner/plan_input.h"

namespace rlwb::core::planner {

// `size`: as llama_shape(); `prompts` replaces the 1024 prompts per step.
PlanInput paper_ppo_input(const std::string& size, int64_t prompts = 1024);

}  // namespace rlwb::core::planner
