// verl's dataset columns, read and checked row by row:
//   <prompt_key>   the prompt: a list of chat messages [{role, content}, ...]
//                  (rendered by the actor's chat template) or plain text
//   data_source    which reward module scores the row ("openai/gsm8k", ...)
//   ability        the skill ("math", "code", ...); optional
//   reward_model   {style, ground_truth}: what the reward compares against
//   extra_info     anything else (split, index, ...); optional
// A missing column or a value of the wrong type is a DatasetError naming
// the file, the row and the column.
#pragma once

#include "core/data/dataset_file.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rlwb::core::data {

struct DatasetRow {
  nlohmann::json prompt;  // array of messages, or a string
  std::string data_source;
  std::string ability;          // "" when the file has none
  std::string reward_style;     // reward_model.style; "" when absent
  nlohmann::json ground_truth;  // reward_model.ground_truth, as written
  nlohmann::json extra_info;    // null when absent
};

// The rows of `file` (read_dataset_file) in verl's columns.
std::vector<DatasetRow> verl_rows(const DatasetFile& file, const std::string& prompt_key);

// The reference answer as text, the way the reward modules read it: a
// string as it is, a number or anything else as JSON.
std::string ground_truth_text(const nlohmann::json& ground_truth);

// A response to imitate (the SFT warm start's `answers`): extra_info.answer
// when the row has one (verl's GSM8K rows carry the worked solution there),
// else the ground truth.
std::string demonstration_text(const DatasetRow& row);

}  // namespace rlwb::core::data
