// Controller-side nodes (`call: builtin.<name>`), run inside the controller
// process. (Task sources, the columns a step starts with: core/tasks/tasks.h.)
// The algorithm builtins (advantages, KL control) register here too, each
// with its ports (core/graph/ports.h), which the validator checks nodes
// against.
#pragma once

#include "core/batch/batch.h"
#include "core/config/trainer_options.h"
#include "core/graph/ports.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rlwb::core {

struct BuiltinContext {
  int64_t step = 0;
  const config::TrainerOptions& trainer;  // the experiment's trainer settings
  const WantedPorts& out;                 // the output ports the node binds
  // Kept for this node from one step to the next (the adaptive KL
  // coefficient, Safe-RLHF's Lagrange multiplier); starts as null.
  nlohmann::json& state;
  // The node's args (graph file `args:`): options such as metrics_prefix.
  const nlohmann::json& args;
};

// A builtin reads its input ports (the batch's columns are named by port)
// and returns its output ports. It may put {"metrics": {key: value}} into
// the returned batch's meta.
using BuiltinFn = std::function<Batch(const Batch& input, BuiltinContext& ctx)>;

struct Builtin {
  BuiltinFn fn;
  CallPorts ports;
};

// The builtins of a build, by name; assembled at the composition root
// (app/registries.h) from add_basic_builtins and add_rl_builtins (rl_builtins.h).
using Builtins = std::map<std::string, Builtin>;

// add (the sum of the input columns) and column_means (a metric per column).
void add_basic_builtins(Builtins& builtins);

}  // namespace rlwb::core
