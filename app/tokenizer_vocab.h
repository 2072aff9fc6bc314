// The planner's TokenizerVocab (core/planner/plan_input.h) for this build:
// the vocabulary size of the workers' tokenizer that a model's config
// names. core/ and ui/ build no tokenizer (it lives in workers/, with
// LibTorch), so the composition root hands this to `rlwb plan`
// (cmd_plan.cpp) and to the editor's Plan panel (gui_main.cpp).
#pragma once

#include <cstdint>

#include "core/config/model_options.h"

namespace rlwb::app {

int64_t tokenizer_vocab(const core::config::TokenizerOptions& options);

}  // namespace rlwb::app
