// Non-neural reward modules as graph nodes (HybridFlow: a math checker or a
// code sandbox is a node of the dataflow like any model). A graph file
// declares them under `rewards:` ({name: {type: math, config: {...}}}) and
// calls them as `<name>.<method>` (usually `score`). They run inside the
// controller process, on a node thread of their own, so they overlap with
// model nodes; heavy work (the code sandbox) is sent on to its own service.
//
// The types are implemented in rewards/ (math, code, format, length,
// weighted_sum) and handed to the controller through
// ControllerOptions::reward_types, so core/ does not depend on rewards/.
//
// Ports of `score` (see docs/rewards.md), declared by each type: in
// `response_text` (object column), what the type needs (`ground_truth`,
// `tests`, ...) and `response_mask` [B, R]; out `token_level_scores` [B, R]
// float32 (each row's score at its last response token, 0 elsewhere, as
// verl) and `reward_details`, an object column (extracted answer, verdict,
// failing test). The runner names the input columns by port and the output
// ports back by the node's columns (core/controller/node_ports.h).
#pragma once

#include "core/batch/batch.h"
#include "core/graph/experiment.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace rlwb::core {

struct RewardCallContext {
  int64_t step = 0;
  const std::string& node;  // graph node id (metrics are named by it)
  const WantedPorts& out;   // the output ports the node binds
};

class RewardModule {
 public:
  virtual ~RewardModule() = default;
  // Runs one method on the node's inputs (the batch's columns named by
  // port) and returns its output ports (and {"metrics": {...}} in meta if
  // it has any). May be called
  // from several node threads at once: implementations are thread-safe.
  // Throws std::exception with a message naming the module and the column.
  virtual Batch call(const std::string& method, const Batch& input, const RewardCallContext& ctx) = 0;
};

struct RewardType;
using RewardTypes = std::map<std::string, RewardType>;

struct RewardType {
  std::string description;
  MethodPorts methods;  // what the validator accepts after "<name>.", with the ports
  // Checks a reward's settings for the validator, before anything starts,
  // without starting anything: throws std::exception whose message starts
  // with the key ("rewards.<name>.config.<key>: ..."). The catalog hands it
  // to the validator (core::RewardSettingsCheck, the same type);
  // create() then gets settings that passed it.
  std::function<void(const RewardSpec& spec, const Experiment& exp)> check;
  // Builds the module of `spec` (its config checked here: throw on a bad
  // setting, naming it). `exp` and `types` let a module build the modules
  // it combines (weighted_sum).
  std::function<std::unique_ptr<RewardModule>(const RewardSpec& spec, const Experiment& exp,
                                              const RewardTypes& types)>
      create;
};

}  // namespace rlwb::core
