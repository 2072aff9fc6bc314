// Every reward module type this build offers to graph files (`rewards:
// {name: {type: ...}}`), for the controller (ControllerOptions::reward_types)
// and the validator's catalog. The types:
//   math          the math answer checker (rewards/math) against ground truth
//   code          the response run as a program in the sandbox against test cases
//   format        a regular expression over the response
//   length        a length penalty (tokens or characters)
//   weighted_sum  the weighted sum of other rewards of the graph
//   by_data_source each row scored by the reward its data_source names
// Each type's config keys and columns are documented in docs/rewards.md.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

const core::RewardTypes& builtin_reward_types();

}  // namespace rlwb::rewards
