// What every reward module does with columns: read the response texts and
// another object column by position in the node's `in` list, and write the
// per-row scores as verl does -- the whole score on each row's last response
// token ([B, R] float32, 0 elsewhere) -- plus an optional details column.
#pragma once

#include "core/controller/reward_module.h"

#include <string>
#include <vector>

namespace rlwb::rewards {

// Every type offers one method, `score`; anything else is an error naming
// the reward and its type.
void require_score_method(const std::string& method, const std::string& reward, const std::string& type);

// The values of object column in[index]. Throws naming the module, the
// node and the column when the node has fewer inputs, the batch lacks the
// column, or it is a tensor column.
const std::vector<nlohmann::json>& object_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                                 size_t index, const std::string& module);

// The text of object column in[index] (strings; other JSON is dumped).
std::vector<std::string> text_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                     size_t index, const std::string& module);

// The response mask: the last tensor column of `in` ([B, R]).
torch::Tensor response_mask_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                   const std::string& module);

// out[0] = scores at the last response token; out[1] (if the node has it) =
// details; meta.metrics["reward/<node>/mean"] = mean score.
core::Batch score_output(const std::vector<double>& scores, std::vector<nlohmann::json> details,
                         const torch::Tensor& response_mask, const core::RewardCallContext& ctx);

}  // namespace rlwb::rewards
