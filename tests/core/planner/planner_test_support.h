// PlanInputs built in code for the planner's tests: a PPO graph (actor
// generates, reference and critic score, both trained models update) of
// Llama-shaped models, without a graph file or a tokenizer.
#pragma once

#include "core/planner/device_profile.h"
#include "core/planner/plan_input.h"

namespace rlwb::core::planner::testing {

// Llama 2's shapes: "7b", "13b", "70b" (grouped-query attention).
inline ModelShape llama(const std::string& size, bool value_head = false) {
  ModelShape s;
  if (size == "7b") s = {4096, 11008, 32, 32, 32, 32000};
  if (size == "13b") s = {5120, 13824, 40, 40, 40, 32000};
  if (size == "70b") s = {8192, 28672, 80, 64, 8, 32000};
  s.value_head = value_head;
  return s;
}

inline PlannedModel model(const std::string& name, ModelShape shape, bool trained, bool generates) {
  PlannedModel m;
  m.name = name;
  m.role = name;
  m.shape = shape;
  m.micro_batch_size = 8;
  m.trained = trained;
  m.generates = generates;
  return m;
}

// actor, critic, ref, reward; nodes gen -> {ref, values, reward} -> adv -> {critic_update, actor_update}.
inline PlanInput ppo_input(const std::string& size, int64_t prompts = 1024) {
  PlanInput in;
  in.models = {model("actor", llama(size), true, true), model("critic", llama(size, true), true, false),
               model("ref", llama(size), false, false), model("reward", llama(size, true), false, false)};
  in.stages = {{"gen", StageKind::kGenerate, 0, {}},           {"ref", StageKind::kForward, 2, {0}},
               {"values", StageKind::kForward, 1, {0}},        {"reward", StageKind::kForward, 3, {0}},
               {"adv", StageKind::kController, -1, {1, 2, 3}}, {"critic_update", StageKind::kTrain, 1, {4}},
               {"actor_update", StageKind::kTrain, 0, {4}}};
  in.workload = {prompts, 1, 1024, 1024};
  return in;
}

}  // namespace rlwb::core::planner::testing
