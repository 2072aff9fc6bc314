// What every reward module does with its ports: read the response texts
// and the other object inputs by port name, and write the per-row scores as
// verl does -- the whole score on each row's last response token ([B, R]
// float32, 0 elsewhere) -- plus the details column. The runner has named
// the node's columns by port before the call (core/controller/node_ports.h),
// so a module never sees the graph's column names.
#pragma once

#include "core/controller/reward_module.h"

#include <string>
#include <vector>

namespace rlwb::rewards {

// Every type offers one method, `score`; anything else is an error naming
// the reward and its type.
void require_score_method(const std::string& method, const std::string& reward, const std::string& type);

// The ports of `score`: in `response_text` (required unless
// `text_required` is false), the type's own `reads`, and `response_mask`;
// out `token_level_scores` and `reward_details`.
core::MethodPorts score_method(std::vector<core::PortSpec> reads, bool text_required = true);

// The values of object input port `port`. Throws naming the module, the
// node and the port when the node binds no column to it, or binds a tensor
// column.
const std::vector<nlohmann::json>& object_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                               const std::string& port, const std::string& module);

// The text of object input port `port` (strings; other JSON is dumped).
std::vector<std::string> text_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                   const std::string& port, const std::string& module);

// The input port `response_mask`, a tensor [B, R].
torch::Tensor response_mask_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                 const std::string& module);

// token_level_scores = scores at the last response token; reward_details =
// details; meta.metrics["reward/<node>/mean"] = mean score.
core::Batch score_output(const std::vector<double>& scores, std::vector<nlohmann::json> details,
                         const torch::Tensor& response_mask, const core::RewardCallContext& ctx);

}  // namespace rlwb::rewards
