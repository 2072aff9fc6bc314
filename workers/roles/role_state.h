// A model role's resumable state on one rank, as that rank holds it: its
// parameters (its tensor-parallel shard), each optimizer's moments, update
// count and schedule position (TrainState::state), and the process's torch
// CPU random state. The controller's checkpoint (core/controller/
// checkpoint_store.h) calls the roles' `save_state` / `load_state` methods
// (broadcast, args {dir}); every rank writes or reads <dir>/rank-<r>.pt,
// durably (written whole, fsynced, renamed into place).
//
// Loading checks every tensor against the model as it is now and throws
// naming the tensor, its saved shape and its shape now, so a changed model
// is an error rather than a silent partial load.
#pragma once

#include "workers/roles/model_setup.h"

#include <memory>
#include <string>
#include <vector>

namespace rlwb::workers::roles {

// One optimizer of a role: its name in the file ("rl", "sft"), where the
// role keeps it (made on load when the file has it) and its settings.
struct TrainStateSlot {
  std::string name;
  std::unique_ptr<TrainState>* state;
  OptimOptions settings;
};

std::string role_state_file(const std::string& dir, const WorkerEnv& env);
void save_role_state(ModelRole& role, const std::vector<TrainStateSlot>& slots, const std::string& dir,
                     WorkerEnv& env);
void load_role_state(ModelRole& role, const std::vector<TrainStateSlot>& slots, const std::string& dir,
                     WorkerEnv& env);

}  // namespace rlwb::workers::roles
