// AdvantageResult: what every advantage estimator returns (gae.h,
// discounted_returns.h, group_advantages.h, advantage_estimator.h).
#pragma once

#include <torch/types.h>

namespace rlwb::core::algorithms {

struct AdvantageResult {
  // [batch, response_len]; 0 under the response mask.
  torch::Tensor advantages;
  // [batch, response_len]; 0 under the mask. The critic's regression target
  // for GAE; for the critic-free estimators, as documented on each.
  torch::Tensor returns;
};

}  // namespace rlwb::core::algorithms
