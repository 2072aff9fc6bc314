// Controller-side nodes (`call: builtin.<name>`) and task sources (the
// columns a step starts with). Both run inside the controller process.
// The algorithm builtins (advantages, KL control) register here too.
#pragma once

#include "core/batch/batch.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rlwb::core {

struct BuiltinContext {
  int64_t step = 0;
  const nlohmann::json& trainer;  // experiment's trainer section
  const std::vector<std::string>& in;
  const std::vector<std::string>& out;
  // Kept for this node from one step to the next (the adaptive KL
  // coefficient, Safe-RLHF's Lagrange multiplier); starts as null.
  nlohmann::json& state;
  // The node's args (graph file `args:`), e.g. column renames.
  const nlohmann::json& args;
};

// A builtin reads the node's input columns and returns its output columns.
// It may put {"metrics": {key: value}} into the returned batch's meta.
using BuiltinFn = std::function<Batch(const Batch& input, BuiltinContext& ctx)>;

// A task source makes the batch a step starts with.
using TaskFn = std::function<Batch(int64_t step, const nlohmann::json& task, int64_t seed)>;

// The task json carries "split": "train" (the step's batches) or "test"
// (held-out evaluation, trainer.eval) and "batch_size".
struct TaskSpec {
  TaskFn make;
  std::vector<std::string> columns;  // what it provides (for the validator)
};

const std::map<std::string, BuiltinFn>& builtin_nodes();
const std::map<std::string, TaskSpec>& task_sources();

}  // namespace rlwb::core
