#include "core/algorithms/gae.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {

AdvantageResult gae_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& values,
                              const torch::Tensor& response_mask, const GaeOptions& options) {
  constexpr const char* fn = "gae_advantage";
  detail::check_dim(fn, "token_level_rewards", token_level_rewards, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, token_level_rewards, "token_level_rewards");
  detail::check_same_shape(fn, "values", values, "token_level_rewards", token_level_rewards);
  if (!(options.gamma >= 0 && options.gamma <= 1) || !(options.lambda >= 0 && options.lambda <= 1)) {
    detail::fail(fn, "gamma and lambda must be in [0, 1], got gamma=" + std::to_string(options.gamma) +
                         " lambda=" + std::to_string(options.lambda));
  }
  at::NoGradGuard no_grad;  // advantages are targets, never differentiated
  torch::Tensor r = detail::zero_padding(token_level_rewards, m);
  torch::Tensor v = detail::zero_padding(values, m).to(r.scalar_type());
  torch::Tensor advantages = torch::zeros_like(r);
  torch::Tensor next_value = torch::zeros({r.size(0)}, r.options());
  torch::Tensor next_advantage = torch::zeros({r.size(0)}, r.options());
  for (int64_t t = r.size(1) - 1; t >= 0; --t) {
    torch::Tensor valid = m.select(1, t);
    torch::Tensor v_t = v.select(1, t);
    torch::Tensor delta = r.select(1, t) + options.gamma * next_value - v_t;
    torch::Tensor a_t = delta + options.gamma * options.lambda * next_advantage;
    advantages.select(1, t).copy_(torch::where(valid, a_t, torch::zeros({}, r.options())));
    next_value = torch::where(valid, v_t, next_value);
    next_advantage = torch::where(valid, a_t, next_advantage);
  }
  torch::Tensor returns = torch::where(m, advantages + v, torch::zeros({}, r.options()));
  if (options.whiten) advantages = masked_whiten(advantages, m);
  return {advantages, returns};
}

}  // namespace rlwb::core::algorithms
