#include "core/controller/builtins.h"

#include <torch/torch.h>

namespace rlwb::core {
namespace {

// sum = the sum of every input port (any names; tensors).
Batch add_columns(const Batch& input, BuiltinContext&) {
  if (input.tensors().empty())
    throw std::runtime_error("builtin.add needs at least one tensor input, e.g. in: [a, b]");
  torch::Tensor sum;
  for (const auto& [port, tensor] : input.tensors()) sum = sum.defined() ? sum + tensor : tensor.clone();
  Batch out;
  out.set_tensor("sum", sum);
  return out;
}

// Logs the mean of every input port as metric "<port>/mean"; writes nothing.
Batch column_means(const Batch& input, BuiltinContext&) {
  Batch out;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [port, tensor] : input.tensors())
    metrics[port + "/mean"] = tensor.to(torch::kFloat64).mean().item<double>();
  out.meta()["metrics"] = metrics;
  return out;
}

// Variadic: any input port, `out` as given.
CallPorts any_inputs(std::vector<PortSpec> out) {
  CallPorts ports = call_ports({}, std::move(out));
  ports.any_in = true;
  return ports;
}

}  // namespace

void add_basic_builtins(Builtins& builtins) {
  builtins["add"] = {add_columns, any_inputs({out_port("sum", "the sum of the input tensors")})};
  builtins["column_means"] = {column_means, any_inputs({})};
}

}  // namespace rlwb::core
