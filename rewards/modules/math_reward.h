// Reward type "math" (the math answer checker as a graph node).
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType math_reward_type();

}  // namespace rlwb::rewards
