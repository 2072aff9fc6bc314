// Token entropy of the policy and the entropy bonus of the actor loss.
// Used by the actor on the workers (update and log-prob passes).
//
//   H(logits) = -sum_v p_v log p_v,  p = softmax(logits)
// computed from log_softmax, so large logits do not overflow; vocabulary
// entries with logit -inf (p = 0) contribute 0 to H and to its gradient.
//
// The bonus: entropy = aggregate_loss(H, mask, aggregation) (metric
// actor/entropy), and the term added to the actor loss is
// loss = -coeff * entropy (maximising entropy).
#pragma once

#include <torch/types.h>

#include "core/algorithms/algorithm_error.h"
#include "core/algorithms/loss_aggregation.h"

namespace rlwb::core::algorithms {

// logits: [..., vocab]. Returns [...]: the entropy of each position's
// categorical distribution. Differentiable.
torch::Tensor entropy_from_logits(const torch::Tensor& logits);

struct EntropyBonus {
  torch::Tensor entropy;    // 0-dim, aggregated H, differentiable
  torch::Tensor loss;       // 0-dim, -coeff * entropy: add to the actor loss
  Metrics metrics() const;  // actor/entropy
};

// token_entropy, response_mask: [batch, response_len] (token_entropy from
// entropy_from_logits). coeff >= 0.
EntropyBonus entropy_bonus(const torch::Tensor& token_entropy, const torch::Tensor& response_mask,
                           double coeff, const LossAggregation& aggregation = {});

}  // namespace rlwb::core::algorithms
