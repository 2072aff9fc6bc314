// Critic-free advantages built from per-token returns: REINFORCE++
// (Hu 2025) and ReMax (Li et al. 2023). Used by advantage_estimator.h.
//
// Returns skip masked positions: over the valid positions t_1 < ... < t_n
// of a row, G_{t_k} = r_{t_k} + gamma * G_{t_{k+1}} (G_{t_{n+1}} = 0), and
// G = 0 under the mask. With trailing padding only this is the plain
// discounted reverse cumulative sum.
#pragma once

#include <torch/types.h>

#include "core/algorithms/advantage_result.h"

namespace rlwb::core::algorithms {

// G as above. token_level_rewards, response_mask: [batch, response_len];
// gamma in [0, 1].
torch::Tensor discounted_returns(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                                 double gamma);

// REINFORCE++: advantages = masked_whiten(G) over all valid tokens of the
// batch; returns = G (unwhitened).
AdvantageResult reinforce_pp_advantage(const torch::Tensor& token_level_rewards,
                                       const torch::Tensor& response_mask, double gamma = 1.0);

// ReMax: advantages[b, t] = G[b, t] - baseline_scores[b] with gamma = 1, on
// valid tokens; returns = G. baseline_scores: [batch], the reward of the
// greedy response to the same prompt.
AdvantageResult remax_advantage(const torch::Tensor& token_level_rewards,
                                const torch::Tensor& baseline_scores, const torch::Tensor& response_mask);

}  // namespace rlwb::core::algorithms
