#include "core/tasks/tasks.h"

#include <torch/torch.h>

namespace rlwb::core::tasks {
namespace {

// Task "toy_numbers": x = step * batch_size + i, as float32, with a text prompt per row.
Batch toy_numbers(const config::TaskOptions&, const TaskDraw& draw, int64_t) {
  const int64_t rows = draw.batch_size, step = draw.step;
  Batch b;
  b.set_tensor("x", torch::arange(rows, torch::kFloat32) + static_cast<float>(step * rows));
  std::vector<nlohmann::json> prompts;
  for (int64_t i = 0; i < rows; ++i) prompts.push_back("number " + std::to_string(step * rows + i));
  b.set_objects("prompts", prompts);
  return b;
}

}  // namespace

TaskSpec toy_numbers_task() { return {toy_numbers, {"x", "prompts"}}; }

}  // namespace rlwb::core::tasks
