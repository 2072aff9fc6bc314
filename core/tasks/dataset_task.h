// Task "dataset": the prompts of verl-format dataset files (Parquet or
// JSON Lines; core/data/), for users who bring their own data.
//   task: {name: dataset, train_files: [...], val_files: [...],
//          prompt_key: prompt, max_prompt_length: 512, filter_overlong: true,
//          shuffle: true, tokenizer: <default: the actor's>}
// Columns: prompts (the prompt column: chat messages or text), answers
// (a demonstration for the SFT warm start: extra_info.answer, else the
// ground truth), ground_truth (reward_model.ground_truth as text),
// data_source, ability, extra_info (objects), group_index [rows] int64.
// Training rows go through the file order (or, with shuffle, an order drawn
// per epoch from the seed) batch_size at a time, wrapping into the next
// epoch; the held-out split is val_files in file order. The files are read
// once per content (path, size, modification time), by the validator's
// check and the first step alike.
#pragma once

#include "core/tasks/tasks.h"

#include <functional>

namespace rlwb::core::tasks {

// The tokens of one prompt as the actor will see them (after its chat
// template); throws when the prompt cannot be encoded.
using PromptLength = std::function<int64_t(const nlohmann::json& prompt)>;
// Makes the counter for a tokenizer setting (the composition root has the
// tokenizers: app/registries.cpp).
using PromptLengthOf = std::function<PromptLength(const config::TokenizerOptions& tokenizer)>;

TaskSpec dataset_task(PromptLengthOf prompt_length_of);
extern const std::vector<std::string> kDatasetColumns;

}  // namespace rlwb::core::tasks
