#include "core/algorithms/kl.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {
namespace {

void check_coef(std::string_view fn, double kl_coef) {
  if (!(kl_coef >= 0)) detail::fail(fn, "kl_coef must be >= 0, got " + std::to_string(kl_coef));
}

}  // namespace

KlEstimator parse_kl_estimator(std::string_view name) {
  for (const auto& [known, estimator] : kl_estimator_names())
    if (known == name) return estimator;
  detail::fail("parse_kl_estimator", "unknown KL estimator '" + std::string(name) +
                                         "'; use k1 (kl), k2 (mse), k3 (low_var_kl) or abs");
}

std::string_view to_string(KlEstimator estimator) {
  for (const auto& [name, value] : kl_estimator_names())
    if (value == estimator) return name;
  return "unknown";
}

torch::Tensor kl_penalty(const torch::Tensor& log_prob, const torch::Tensor& ref_log_prob,
                         const torch::Tensor& response_mask, KlEstimator estimator) {
  constexpr const char* fn = "kl_penalty";
  detail::check_dim(fn, "log_prob", log_prob, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, log_prob, "log_prob");
  detail::check_same_shape(fn, "ref_log_prob", ref_log_prob, "log_prob", log_prob);
  torch::Tensor log_r = detail::zero_padding(log_prob, m) - detail::zero_padding(ref_log_prob, m).detach();
  torch::Tensor kl;
  switch (estimator) {
    case KlEstimator::kK1:
      kl = log_r;
      break;
    case KlEstimator::kK2:
      kl = 0.5 * log_r.square();
      break;
    case KlEstimator::kK3: {
      torch::Tensor clamped = log_r.clamp(-20.0, 20.0);
      kl = (torch::exp(-clamped) - 1.0 + clamped).clamp(-10.0, 10.0);
      break;
    }
    case KlEstimator::kAbs:
      kl = log_r.abs();
      break;
  }
  return torch::where(m, kl, torch::zeros({}, kl.options()));
}

Metrics KlInReward::metrics() const {
  return {{"actor/reward_kl_penalty", current_kl}, {"actor/reward_kl_penalty_coeff", kl_coef}};
}

KlInReward apply_kl_in_reward(const torch::Tensor& token_level_scores, const torch::Tensor& log_prob,
                              const torch::Tensor& ref_log_prob, const torch::Tensor& response_mask,
                              double kl_coef, KlEstimator estimator) {
  constexpr const char* fn = "apply_kl_in_reward";
  check_coef(fn, kl_coef);
  detail::check_same_shape(fn, "token_level_scores", token_level_scores, "log_prob", log_prob);
  at::NoGradGuard no_grad;  // rewards are targets
  KlInReward out;
  out.kl = kl_penalty(log_prob, ref_log_prob, response_mask, estimator);
  torch::Tensor m = detail::bool_mask(fn, response_mask, log_prob, "log_prob");
  torch::Tensor scores = detail::zero_padding(token_level_scores, m).to(out.kl.scalar_type());
  out.token_level_rewards = torch::where(m, scores - kl_coef * out.kl, torch::zeros({}, scores.options()));
  torch::Tensor per_row = masked_mean(out.kl, m, 1);
  out.current_kl = masked_mean(per_row, m.any(1)).item<double>();
  out.kl_coef = kl_coef;
  return out;
}

Metrics KlLoss::metrics() const { return {{"actor/kl_loss", kl.item<double>()}, {"actor/kl_coef", kl_coef}}; }

KlLoss kl_loss(const torch::Tensor& log_prob, const torch::Tensor& ref_log_prob,
               const torch::Tensor& response_mask, double kl_coef, KlEstimator estimator,
               const LossAggregation& aggregation) {
  check_coef("kl_loss", kl_coef);
  KlLoss out;
  out.kl = aggregate_loss(kl_penalty(log_prob, ref_log_prob, response_mask, estimator), response_mask,
                          aggregation);
  out.loss = kl_coef * out.kl;
  out.kl_coef = kl_coef;
  return out;
}

}  // namespace rlwb::core::algorithms
