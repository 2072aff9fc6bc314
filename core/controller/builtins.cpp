#include "core/controller/builtins.h"

#include "core/controller/arithmetic_task.h"
#include "core/controller/print_program_task.h"
#include "core/controller/rl_builtins.h"

#include <torch/torch.h>

namespace rlwb::core {
namespace {

// out[0] = sum of the input tensor columns.
Batch add_columns(const Batch& input, BuiltinContext& ctx) {
  if (ctx.in.empty() || ctx.out.size() != 1)
    throw std::runtime_error("builtin.add needs at least one input column and exactly one output column");
  torch::Tensor sum = input.tensor(ctx.in[0]).clone();
  for (size_t i = 1; i < ctx.in.size(); ++i) sum = sum + input.tensor(ctx.in[i]);
  Batch out;
  out.set_tensor(ctx.out[0], sum);
  return out;
}

// Logs the mean of every input column as metric "<column>/mean"; passes
// nothing on, so it may only have outputs that it copies (none by default).
Batch column_means(const Batch& input, BuiltinContext& ctx) {
  Batch out;
  nlohmann::json metrics = nlohmann::json::object();
  for (auto& name : ctx.in) metrics[name + "/mean"] = input.tensor(name).to(torch::kFloat64).mean().item<double>();
  out.meta()["metrics"] = metrics;
  return out;
}

// Task "toy_numbers": x = step * batch_size + i, as float32, with a text prompt per row.
Batch toy_numbers(int64_t step, const nlohmann::json& task, int64_t seed) {
  int64_t rows = task.value("batch_size", 8);
  Batch b;
  b.set_tensor("x", torch::arange(rows, torch::kFloat32) + static_cast<float>(step * rows));
  std::vector<nlohmann::json> prompts;
  for (int64_t i = 0; i < rows; ++i) prompts.push_back("number " + std::to_string(step * rows + i));
  b.set_objects("prompts", prompts);
  return b;
}

}  // namespace

const std::map<std::string, BuiltinFn>& builtin_nodes() {
  static const std::map<std::string, BuiltinFn> nodes = {
      {"add", add_columns},
      {"column_means", column_means},
      {"compute_advantage", compute_advantage},
      {"safe_rlhf_advantage", safe_rlhf_advantage},
  };
  return nodes;
}

const std::map<std::string, TaskSpec>& task_sources() {
  static const std::map<std::string, TaskSpec> tasks = {
      {"toy_numbers", {toy_numbers, {"x", "prompts"}}},
      {"arithmetic", {arithmetic_task, kArithmeticColumns}},
      {"print_program", {print_program_task, kPrintProgramColumns}},
  };
  return tasks;
}

}  // namespace rlwb::core
