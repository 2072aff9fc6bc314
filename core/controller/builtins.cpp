#include "core/controller/builtins.h"

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
  for (auto& name : ctx.in)
    metrics[name + "/mean"] = input.tensor(name).to(torch::kFloat64).mean().item<double>();
  out.meta()["metrics"] = metrics;
  return out;
}

}  // namespace

void add_basic_builtins(Builtins& builtins) {
  builtins["add"] = add_columns;
  builtins["column_means"] = column_means;
}

}  // namespace rlwb::core
