#include "core/algorithms/policy_loss.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {

Metrics PolicyLoss::metrics() const {
  return {{"actor/pg_loss", loss.item<double>()},
          {"actor/pg_clipfrac", clipfrac.item<double>()},
          {"actor/ppo_kl", ppo_kl.item<double>()},
          {"actor/pg_clipfrac_lower", clipfrac_lower.item<double>()}};
}

PolicyLoss policy_loss(const torch::Tensor& old_log_prob, const torch::Tensor& log_prob,
                       const torch::Tensor& advantages, const torch::Tensor& response_mask,
                       const PolicyLossOptions& options) {
  constexpr const char* fn = "policy_loss";
  detail::check_dim(fn, "log_prob", log_prob, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, log_prob, "log_prob");
  detail::check_same_shape(fn, "old_log_prob", old_log_prob, "log_prob", log_prob);
  detail::check_same_shape(fn, "advantages", advantages, "log_prob", log_prob);
  if (!(options.clip_low >= 0 && options.clip_low < 1) || !(options.clip_high >= 0)) {
    detail::fail(
        fn, "need 0 <= clip_low < 1 and clip_high >= 0, got clip_low=" + std::to_string(options.clip_low) +
                " clip_high=" + std::to_string(options.clip_high));
  }
  if (options.clip_ratio_c && !(*options.clip_ratio_c > 1)) {
    detail::fail(fn, "clip_ratio_c must be > 1 (or unset to turn dual clip off), got " +
                         std::to_string(*options.clip_ratio_c));
  }

  torch::Tensor logp = detail::zero_padding(log_prob, m);
  torch::Tensor old_logp = detail::zero_padding(old_log_prob, m).detach();
  torch::Tensor a = detail::zero_padding(advantages, m).detach();

  torch::Tensor log_ratio = (logp - old_logp).clamp(-20.0, 20.0);
  torch::Tensor ratio = torch::exp(log_ratio);
  torch::Tensor l1 = -a * ratio;
  torch::Tensor l2 = -a * ratio.clamp(1.0 - options.clip_low, 1.0 + options.clip_high);
  torch::Tensor clipped = torch::maximum(l1, l2);
  torch::Tensor per_token = clipped;
  torch::Tensor lower_active = torch::zeros_like(m);
  if (options.clip_ratio_c) {
    torch::Tensor l3 = -a * *options.clip_ratio_c;
    torch::Tensor negative = a < 0;
    per_token = torch::where(negative, torch::minimum(clipped, l3), clipped);
    lower_active = negative & (clipped > l3);
  }

  PolicyLoss out;
  out.loss = aggregate_loss(per_token, m, options.aggregation);
  at::NoGradGuard no_grad;
  out.clipfrac = masked_mean((l2 > l1).to(logp.scalar_type()), m).detach();
  out.ppo_kl = masked_mean(-log_ratio, m).detach();
  out.clipfrac_lower = masked_mean(lower_active.to(logp.scalar_type()), m).detach();
  return out;
}

}  // namespace rlwb::core::algorithms
