#include "core/algorithms/loss_aggregation.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {
namespace {

constexpr const char* kFn = "aggregate_loss";

// sum / (normalizer or own count); own count 0 means the sum is 0 too.
torch::Tensor divide(const torch::Tensor& sum, const torch::Tensor& own_count,
                     const std::optional<double>& normalizer) {
  if (normalizer) return sum / *normalizer;
  return sum / own_count.clamp_min(1);
}

}  // namespace

LossAggMode parse_loss_agg_mode(std::string_view name) {
  for (const auto& [known, mode] : loss_agg_mode_names())
    if (known == name) return mode;
  detail::fail("parse_loss_agg_mode", "unknown loss aggregation '" + std::string(name) +
                                          "'; use token-mean, seq-mean-token-sum, seq-mean-token-mean or "
                                          "seq-mean-token-sum-norm");
}

std::string_view to_string(LossAggMode mode) {
  for (const auto& [name, value] : loss_agg_mode_names())
    if (value == mode) return name;
  return "unknown";
}

torch::Tensor aggregate_loss(const torch::Tensor& loss, const torch::Tensor& mask,
                             const LossAggregation& how) {
  detail::check_dim(kFn, "loss", loss, 2);
  torch::Tensor m = detail::bool_mask(kFn, mask, loss, "loss");
  if (how.normalizer && !(*how.normalizer > 0)) {
    detail::fail(
        kFn, "normalizer must be > 0 (the token or sequence count), got " + std::to_string(*how.normalizer));
  }
  torch::Tensor x = detail::zero_padding(loss, m);
  torch::Tensor row_tokens = m.sum(1).to(x.scalar_type());
  torch::Tensor sequences = (row_tokens > 0).sum().to(x.scalar_type());
  switch (how.mode) {
    case LossAggMode::kTokenMean:
      return divide(x.sum(), row_tokens.sum(), how.normalizer);
    case LossAggMode::kSeqMeanTokenSum:
      return divide(x.sum(1).sum(), sequences, how.normalizer);
    case LossAggMode::kSeqMeanTokenMean:
      return divide(masked_mean(x, m, 1).sum(), sequences, how.normalizer);
    case LossAggMode::kSeqMeanTokenSumNorm: {
      double length = how.norm_length.value_or(static_cast<double>(loss.size(1)));
      if (!(length > 0)) {
        detail::fail(kFn,
                     "norm_length must be > 0 for seq-mean-token-sum-norm, got " + std::to_string(length));
      }
      return divide(x.sum(1).sum() / length, sequences, how.normalizer);
    }
  }
  detail::fail(kFn, "unknown loss aggregation mode");
}

}  // namespace rlwb::core::algorithms
