#include "core/planner/paper_workload.h"

namespace rlwb::core::planner {

PlanInput paper_ppo_input(const std::string& size, int64_t prompts) {
  auto model = [&](const std::string& name, bool value_head, bool trained, bool generates) {
    PlannedModel m;
    m.name = name;
    m.role = name;
    m.shape = llama_shape(size, value_head);
    m.micro_batch_size = 8;
    m.epochs = 1;
    m.mini_batch_size = trained ? prompts / 8 : 0;  // 8 updates of the step's rows
    m.trained = trained;
    m.generates = generates;
    return m;
  };
  PlanInput in;
  in.models = {model("actor", false, true, true), model("critic", true, true, false),
               model("ref", false, false, false), model("reward", true, false, false)};
  in.stages = {{"gen", StageKind::kGenerate, 0, {}},           {"ref", StageKind::kForward, 2, {0}},
               {"values", StageKind::kForward, 1, {0}},        {"reward", StageKind::kForward, 3, {0}},
               {"adv", StageKind::kController, -1, {1, 2, 3}}, {"critic_update", StageKind::kTrain, 1, {4}},
               {"actor_update", StageKind::kTrain, 0, {4}}};
  in.workload = {prompts, 1, 1024, 1024};
  return in;
}

}  // namespace rlwb::core::planner
