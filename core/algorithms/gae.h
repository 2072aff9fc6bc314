// Generalised Advantage Estimation (Schulman et al. 2016) for PPO with a
// critic. Used by the controller's advantage node (advantage_estimator.h)
// for `gae`, and for Safe-RLHF's cost advantages.
//
// Over the valid positions t_1 < t_2 < ... < t_n of a row (padding and
// holes in the mask are skipped, not treated as steps):
//   delta_k = r_{t_k} + gamma * V_{t_{k+1}} - V_{t_k}     (V_{t_{n+1}} = 0)
//   A_k     = delta_k + gamma * lambda * A_{k+1}           (A_{n+1} = 0)
//   returns = A + V                                        (before whitening)
// With `whiten` (verl's default), the advantages are then masked_whiten-ed
// over all valid tokens of the batch; the returns are not.
#pragma once

#include <torch/types.h>

#include "core/algorithms/advantage_result.h"

namespace rlwb::core::algorithms {

struct GaeOptions {
  double gamma = 1.0;   // discount, in [0, 1]
  double lambda = 1.0;  // GAE lambda, in [0, 1]
  bool whiten = true;   // whiten advantages over the batch's valid tokens
};

// token_level_rewards, values, response_mask: [batch, response_len].
AdvantageResult gae_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& values,
                              const torch::Tensor& response_mask, const GaeOptions& options = {});

}  // namespace rlwb::core::algorithms
