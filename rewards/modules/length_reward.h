// Reward type "length": a length penalty (<= 0) for responses longer than a
// target, measured in tokens (the response mask) or characters (the
// response text, UTF-8 code points). Config (docs/rewards.md):
//   unit ("tokens" | "chars")   default tokens
//   target (number, 0)          no penalty up to this length
//   penalty (number)            per unit over the target, or instead
//   max_length (number)         the length where the penalty reaches max_penalty
//                               (DAPO's overlong shaping: linear from target to max_length)
//   max_penalty (number)        cap on the penalty (default: none; 1 with max_length)
//   below_penalty (number, 0)   per unit short of the target
// score = -min(max_penalty, penalty * max(0, len - target) + below_penalty * max(0, target - len))
// Ports: in response_text (read for chars only), response_mask; out
// token_level_scores, reward_details {length, penalty}.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType length_reward_type();

}  // namespace rlwb::rewards
