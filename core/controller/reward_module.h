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
// Column conventions for `score` (see docs/rewards.md): the node's `in`
// columns are, by position, the response text (object column), then what
// the type needs (ground truth, test cases, ...), and the response mask
// [B, R]; `out` is the token-level score [B, R] float32 (each row's score
// at its last response token, 0 elsewhere, as verl) and optionally a
// details object column (extracted answer, verdict, failing test).
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
  const std::string& node;              // graph node id
  const std::vector<std::string>& in;   // the node's input column names, in order
  const std::vector<std::string>& out;  // the node's output column names, in order
};

class RewardModule {
 public:
  virtual ~RewardModule() = default;
  // Runs one method on the node's input columns and returns its output
  // columns (and {"metrics": {...}} in meta if it has any). May be called
  // from several node threads at once: implementations are thread-safe.
  // Throws std::exception with a message naming the module and the column.
  virtual Batch call(const std::string& method, const Batch& input, const RewardCallContext& ctx) = 0;
};

struct RewardType;
using RewardTypes = std::map<std::string, RewardType>;

struct RewardType {
  std::string description;
  std::set<std::string> methods;  // what the validator accepts after "<name>."
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
