#include "rewards/modules/reward_types.h"

#include "rewards/modules/math_reward.h"

namespace rlwb::rewards {

const core::RewardTypes& builtin_reward_types() {
  static const core::RewardTypes types = {
      {"math", math_reward_type()},
  };
  return types;
}

}  // namespace rlwb::rewards
