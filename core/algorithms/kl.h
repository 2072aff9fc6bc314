// KL between the actor and the reference policy, estimated per token from
// the log-probs of the sampled tokens (Schulman, "Approximating KL
// divergence", 2020), and its two uses: a penalty inside the reward (PPO,
// ReMax, ...) or a loss term (GRPO). Used by the controller (in the reward)
// and the actor (as a loss term).
//
// With log r = log_prob - ref_log_prob (the sample comes from the actor):
//   k1   log r                                  unbiased, can be negative
//   k2   0.5 (log r)^2                          ("mse" in verl)
//   k3   exp(-log r) - 1 + log r                unbiased, >= 0, low variance
//        (verl's "low_var_kl"; log r is clamped to [-20, 20] and the
//        result to at most 10, as verl, so one outlier token cannot blow up)
//   abs  |log r|
// Every estimate is 0 under the response mask.
#pragma once

#include <torch/types.h>

#include <string_view>

#include "core/algorithms/algorithm_error.h"
#include "core/config/algorithm_names.h"
#include "core/algorithms/loss_aggregation.h"

namespace rlwb::core::algorithms {

// "k1" or "kl"; "k2" or "mse"; "k3" or "low_var_kl"; "abs". Throws
// AlgorithmError listing them for anything else.
KlEstimator parse_kl_estimator(std::string_view name);
std::string_view to_string(KlEstimator estimator);

// Per-token KL estimate, [batch, response_len], 0 under the mask.
// Differentiable w.r.t. log_prob (the reference is treated as constant).
torch::Tensor kl_penalty(const torch::Tensor& log_prob, const torch::Tensor& ref_log_prob,
                         const torch::Tensor& response_mask, KlEstimator estimator);

// KL in the reward:
//   token_level_rewards = token_level_scores - kl_coef * kl   (valid tokens)
// token_level_scores usually from place_score_at_last_token (masked_ops.h).
// current_kl = mean over rows with a valid token of masked_mean(kl, row):
// what the adaptive controller is updated with (kl_controller.h).
struct KlInReward {
  torch::Tensor token_level_rewards;  // [batch, response_len], 0 under the mask
  torch::Tensor kl;                   // [batch, response_len], the estimate
  double current_kl = 0;
  double kl_coef = 0;
  // actor/reward_kl_penalty = current_kl,
  // actor/reward_kl_penalty_coeff = kl_coef.
  Metrics metrics() const;
};
KlInReward apply_kl_in_reward(const torch::Tensor& token_level_scores, const torch::Tensor& log_prob,
                              const torch::Tensor& ref_log_prob, const torch::Tensor& response_mask,
                              double kl_coef, KlEstimator estimator = KlEstimator::kK1);

// KL as a loss term: kl = aggregate_loss(kl_penalty(...), mask, aggregation)
// and loss = kl_coef * kl, to be added to the actor loss.
struct KlLoss {
  torch::Tensor kl;    // 0-dim, differentiable
  torch::Tensor loss;  // 0-dim, kl_coef * kl
  double kl_coef = 0;
  Metrics metrics() const;  // actor/kl_loss = kl, actor/kl_coef = kl_coef
};
KlLoss kl_loss(const torch::Tensor& log_prob, const torch::Tensor& ref_log_prob,
               const torch::Tensor& response_mask, double kl_coef, KlEstimator estimator = KlEstimator::kK3,
               const LossAggregation& aggregation = {});

}  // namespace rlwb::core::algorithms
