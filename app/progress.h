// What `rlwb run` prints while a run goes: one line per RL step (a bar,
// the reward, the last held-out score, the KL, tokens/s, the time left),
// the held-out evaluations, and every tenth of the warm start -- all on
// stderr, through the trainer's hooks.
#pragma once

#include "core/controller/trainer.h"

namespace rlwb::app {

// The hooks that print the progress of a run of `steps` RL steps.
core::TrainerHooks progress_printer(int64_t steps);

}  // namespace rlwb::app
