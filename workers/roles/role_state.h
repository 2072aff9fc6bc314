// A model role's resumable state on one rank, as that rank holds it: its
// parameters (its tensor-parallel shard), each optimizer's moments, update
// count and schedule position (TrainState::state), and the process's torch
// CPU random state. The controller's checkpoint (core/controller/
// checkpoint_store.h) calls the roles' `save_state` / `load_state` methods
// (broadcast, args {dir}); every rank writes or reads <dir>/rank-<r>.pt,
// durably (written whole, fsynced, renamed into place).
//
// Pool rank 0 also writes <dir>/config.json (the whole model's config, as
// Hugging Face writes it) and <dir>/rlwb_tokenizer.json (the tokenizer
// setting), so a checkpoint can be exported without the graph file
// (export_role_state; rlwb export).
//
// Loading checks every tensor against the model as it is now and throws
// naming the tensor, its saved shape and its shape now, so a changed model
// is an error rather than a silent partial load; with pipeline stages also
// the share of the vocabulary the rank's embedding and head rows are
// (saved as "vocab/share"), which a changed generation layout reorders.
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

// The whole model of a checkpoint's <model> folder, in the Hugging Face
// layout (model/hf_checkpoint.h) in `out`, for `rlwb export`: from the
// first data-parallel group (pool ranks 0..pp*tp-1, rank = stage*tp + t),
// each block from the pipeline stage that holds it, with stages the
// embedding's and the head's rows from every rank file in the order of the
// vocabulary share each records, every other tensor from stage 0, the
// tensor-parallel shards joined along the dimension they were split on;
// config.json and the tokenizer note as saved. Reads only
// files; throws std::runtime_error naming the file, and the tensor where
// there is one.
void export_role_state(const std::string& dir, int tp, int pp, const std::string& out, torch::Dtype dtype);

}  // namespace rlwb::workers::roles
