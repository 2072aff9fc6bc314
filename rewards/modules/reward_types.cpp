#include "rewards/modules/reward_types.h"

#include "rewards/modules/code_reward.h"
#include "rewards/modules/data_source_reward.h"
#include "rewards/modules/format_reward.h"
#include "rewards/modules/length_reward.h"
#include "rewards/modules/math_reward.h"
#include "rewards/modules/weighted_sum_reward.h"

namespace rlwb::rewards {

const core::RewardTypes& builtin_reward_types() {
  static const core::RewardTypes types = [] {
    core::RewardTypes t = {
        {"math", math_reward_type()},
        {"code", code_reward_type()},
        {"format", format_reward_type()},
        {"length", length_reward_type()},
    };
    // These combine the others and read what they read.
    t.emplace("by_data_source", data_source_reward_type(t));
    t.emplace("weighted_sum", weighted_sum_reward_type(t));
    return t;
  }();
  return types;
}

}  // namespace rlwb::rewards
