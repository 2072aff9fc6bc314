// The critic's clipped value loss (PPO) and the explained-variance metric.
// Used by the critic's update on the workers.
//
// Per valid token, with V the new values, V_old the values at rollout time
// and R the returns (gae.h):
//   V_clip = clamp(V, V_old - clip_range_value, V_old + clip_range_value)
//   L      = max((V - R)^2, (V_clip - R)^2)       ((V - R)^2 without clip)
// loss = 0.5 * aggregate_loss(L, mask, options.aggregation). Metrics:
//   critic/vf_loss      loss
//   critic/vf_clipfrac  fraction of valid tokens with (V_clip - R)^2 >
//                       (V - R)^2 (the clipped term is the one used); 0
//                       without clipping
#pragma once

#include <torch/types.h>

#include <optional>

#include "core/algorithms/algorithm_error.h"
#include "core/algorithms/loss_aggregation.h"

namespace rlwb::core::algorithms {

struct ValueLossOptions {
  // verl's cliprange_value; >= 0. nullopt turns value clipping off.
  std::optional<double> clip_range_value = 0.5;
  LossAggregation aggregation = {};  // token-mean
};

struct ValueLoss {
  torch::Tensor loss;      // 0-dim, differentiable w.r.t. values
  torch::Tensor clipfrac;  // 0-dim, detached
  Metrics metrics() const;
};

// values, old_values, returns, response_mask: [batch, response_len].
ValueLoss value_loss(const torch::Tensor& values, const torch::Tensor& old_values,
                     const torch::Tensor& returns, const torch::Tensor& response_mask,
                     const ValueLossOptions& options = {});

// critic/vf_explained_var: 1 - Var[R - V] / (Var[R] + 1e-5) over valid
// tokens (unbiased variances, as verl). 1 is a perfect critic, 0 one that
// predicts the mean. 0-dim, detached.
torch::Tensor explained_variance(const torch::Tensor& returns, const torch::Tensor& values,
                                 const torch::Tensor& response_mask);

}  // namespace rlwb::core::algorithms
