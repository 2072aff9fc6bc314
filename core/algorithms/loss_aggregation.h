// Loss aggregation: how a [batch, response_len] matrix of per-token losses
// becomes the scalar that is back-propagated. Used by the policy, value, KL
// and entropy losses (policy_loss.h, value_loss.h, kl.h, entropy.h).
//
// With m the response mask, L the per-token loss, S the set of rows with at
// least one valid token (rows with an empty mask are not sequences):
//   token-mean              sum_{b,t} m L / sum_{b,t} m
//   seq-mean-token-sum      (1/|S|) sum_{b in S} sum_t m L
//   seq-mean-token-mean     (1/|S|) sum_{b in S} (sum_t m L / sum_t m)
//   seq-mean-token-sum-norm (1/|S|) sum_{b in S} (sum_t m L) / norm_length
//                           (Dr.GRPO: no per-sequence length normalisation;
//                           norm_length is a constant, default response_len.
//                           verl divides the batch sum by norm_length only;
//                           here it is also averaged over sequences so the
//                           scale does not grow with the batch size.)
// An empty mask gives 0 (still connected to the graph, so backward works).
#pragma once

#include <torch/types.h>

#include <optional>
#include <string_view>

#include "core/config/algorithm_names.h"

namespace rlwb::core::algorithms {

// "token-mean", "seq-mean-token-sum", "seq-mean-token-mean",
// "seq-mean-token-sum-norm" (verl's names); throws AlgorithmError listing
// them for anything else.
LossAggMode parse_loss_agg_mode(std::string_view name);
std::string_view to_string(LossAggMode mode);

struct LossAggregation {
  // Implicit, so that a mode alone converts:
  // aggregate_loss(loss, mask, LossAggMode::kSeqMeanTokenSum).
  // NOLINTNEXTLINE(google-explicit-constructor)
  LossAggregation(LossAggMode mode = LossAggMode::kTokenMean, std::optional<double> normalizer = std::nullopt,
                  std::optional<double> norm_length = std::nullopt)
      : mode(mode), normalizer(normalizer), norm_length(norm_length) {}

  LossAggMode mode;
  // Divide by this instead of this call's own count: the number of tokens
  // (token-mean) or of sequences (seq-mean-*). For gradient accumulation,
  // pass the whole mini-batch's count to every micro-batch: the sum of the
  // micro-batch losses then equals the mini-batch loss. Must be > 0.
  std::optional<double> normalizer;
  // seq-mean-token-sum-norm only: the constant a sequence's token sum is
  // divided by. Default: response_len (dim 1 of the loss). Must be > 0.
  std::optional<double> norm_length;
};

// loss, mask: [batch, response_len]. Returns a 0-dim tensor.
torch::Tensor aggregate_loss(const torch::Tensor& loss, const torch::Tensor& mask,
                             const LossAggregation& how = {});

}  // namespace rlwb::core::algorithms
