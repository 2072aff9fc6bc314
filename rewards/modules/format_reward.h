// Reward type "format": a regular expression over the response text; one
// score when it matches, another when it does not (e.g. 1/0, or 0/-1 as a
// penalty for a missing "Answer:" line). Config (docs/rewards.md):
//   pattern (string, required)   ECMAScript syntax; no backreferences
//   match ("search" | "full")    anywhere in the response (default), or the whole response
//   ignore_case (bool, false)
//   on_match (number, 1), on_miss (number, 0)
// Ports: in response_text, response_mask; out token_level_scores,
// reward_details {matched}.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType format_reward_type();

}  // namespace rlwb::rewards
