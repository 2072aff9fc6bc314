#include "core/algorithms/entropy.h"

#include "core/algorithms/input_checks.h"

namespace rlwb::core::algorithms {

torch::Tensor entropy_from_logits(const torch::Tensor& logits) {
  if (!logits.defined() || logits.dim() < 1 || logits.size(-1) == 0) {
    detail::fail("entropy_from_logits", "logits must have a non-empty last (vocabulary) dimension");
  }
  torch::Tensor log_p = torch::log_softmax(detail::floating(logits), -1);
  // Where p = 0, log p = -inf and p log p must be 0; replacing log p before
  // the product also keeps the gradient finite there.
  torch::Tensor finite_log_p = torch::where(torch::isfinite(log_p), log_p, torch::zeros({}, log_p.options()));
  return -(log_p.exp() * finite_log_p).sum(-1);
}

Metrics EntropyBonus::metrics() const { return {{"actor/entropy", entropy.item<double>()}}; }

EntropyBonus entropy_bonus(const torch::Tensor& token_entropy, const torch::Tensor& response_mask,
                           double coeff, const LossAggregation& aggregation) {
  constexpr const char* fn = "entropy_bonus";
  detail::check_dim(fn, "token_entropy", token_entropy, 2);
  if (!(coeff >= 0)) detail::fail(fn, "coeff must be >= 0, got " + std::to_string(coeff));
  EntropyBonus out;
  out.entropy = aggregate_loss(token_entropy, response_mask, aggregation);
  out.loss = -coeff * out.entropy;
  return out;
}

}  // namespace rlwb::core::algorithms
