// Reward type "weighted_sum": the weighted sum of other reward modules of
// the same graph file (e.g. correctness + 0.1 * format - length penalty).
// It builds each term's module from the experiment's `rewards:` entry
// through the reward types, calls every term on the node's input (the
// terms run at the same time), adds their token-level scores times their
// weights and merges their details by term name. Config (docs/rewards.md):
//   terms: {reward_name: weight, ...}  or  {reward_name: {weight: w}, ...}
// Each term reads the node's input ports by name. Ports: in response_mask
// and every input port of `term_types` (response_text, ground_truth,
// tests, ...; optional), out token_level_scores, reward_details {term:
// {score, ...term details}}. Metrics: reward/<node>/mean and
// reward/<node>/<term>/mean for each term.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType weighted_sum_reward_type(const core::RewardTypes& term_types);

}  // namespace rlwb::rewards
