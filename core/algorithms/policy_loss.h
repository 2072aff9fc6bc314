// PPO's clipped surrogate policy loss, with asymmetric clipping
// (DAPO's clip-higher) and dual clipping (Ye et al. 2020). Used by the
// actor's update on the workers.
//
// Per valid token, with A the advantage:
//   r   = exp(clamp(log_prob - old_log_prob, -20, 20))
//   L1  = -A r
//   L2  = -A clamp(r, 1 - clip_low, 1 + clip_high)
//   Lc  = max(L1, L2)                                   (PPO clip)
//   L3  = -A clip_ratio_c                               (dual clip)
//   L   = A < 0 ? min(Lc, L3) : Lc                      (Lc if no dual clip)
// loss = aggregate_loss(L, mask, options.aggregation). Metrics, all over
// valid tokens:
//   actor/pg_loss            loss
//   actor/pg_clipfrac        fraction with L2 > L1 (the clip is active)
//   actor/ppo_kl             masked_mean(-clamp(log_prob - old_log_prob,
//                            -20, 20)), the k1 estimate of KL(old || new)
//   actor/pg_clipfrac_lower  fraction with A < 0 and Lc > L3 (dual clip
//                            active); 0 without dual clip
// Gradients flow to log_prob only, and never to padded positions.
#pragma once

#include <torch/types.h>

#include <optional>

#include "core/algorithms/algorithm_error.h"
#include "core/algorithms/loss_aggregation.h"

namespace rlwb::core::algorithms {

struct PolicyLossOptions {
  double clip_low = 0.2;   // ratio floor 1 - clip_low; in [0, 1)
  double clip_high = 0.2;  // ratio ceiling 1 + clip_high (DAPO: 0.28); >= 0
  // Dual clip constant c: bounds the loss of negative-advantage tokens by
  // -A c. Must be > 1; nullopt turns dual clipping off.
  std::optional<double> clip_ratio_c = 3.0;
  LossAggregation aggregation = {};  // token-mean
};

struct PolicyLoss {
  torch::Tensor loss;            // 0-dim, differentiable
  torch::Tensor clipfrac;        // 0-dim, detached
  torch::Tensor ppo_kl;          // 0-dim, detached
  torch::Tensor clipfrac_lower;  // 0-dim, detached
  Metrics metrics() const;       // the four actor/ metrics above
};

// old_log_prob, log_prob, advantages, response_mask: [batch, response_len].
PolicyLoss policy_loss(const torch::Tensor& old_log_prob, const torch::Tensor& log_prob,
                       const torch::Tensor& advantages, const torch::Tensor& response_mask,
                       const PolicyLossOptions& options = {});

}  // namespace rlwb::core::algorithms
