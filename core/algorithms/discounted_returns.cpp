#include "core/algorithms/discounted_returns.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {
namespace {

torch::Tensor returns_of(std::string_view fn, const torch::Tensor& token_level_rewards,
                         const torch::Tensor& response_mask, double gamma) {
  detail::check_dim(fn, "token_level_rewards", token_level_rewards, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, token_level_rewards, "token_level_rewards");
  if (!(gamma >= 0 && gamma <= 1)) {
    detail::fail(fn, "gamma must be in [0, 1], got " + std::to_string(gamma));
  }
  at::NoGradGuard no_grad;
  torch::Tensor r = detail::zero_padding(token_level_rewards, m);
  torch::Tensor returns = torch::zeros_like(r);
  torch::Tensor running = torch::zeros({r.size(0)}, r.options());
  for (int64_t t = r.size(1) - 1; t >= 0; --t) {
    torch::Tensor valid = m.select(1, t);
    torch::Tensor g = r.select(1, t) + gamma * running;
    returns.select(1, t).copy_(torch::where(valid, g, torch::zeros({}, r.options())));
    running = torch::where(valid, g, running);
  }
  return returns;
}

}  // namespace

torch::Tensor discounted_returns(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                                 double gamma) {
  return returns_of("discounted_returns", token_level_rewards, response_mask, gamma);
}

AdvantageResult reinforce_pp_advantage(const torch::Tensor& token_level_rewards,
                                       const torch::Tensor& response_mask, double gamma) {
  torch::Tensor returns = returns_of("reinforce_pp_advantage", token_level_rewards, response_mask, gamma);
  return {masked_whiten(returns, response_mask), returns};
}

AdvantageResult remax_advantage(const torch::Tensor& token_level_rewards,
                                const torch::Tensor& baseline_scores, const torch::Tensor& response_mask) {
  constexpr const char* fn = "remax_advantage";
  torch::Tensor returns = returns_of(fn, token_level_rewards, response_mask, 1.0);
  detail::check_rows(fn, "baseline_scores", baseline_scores, returns.size(0));
  torch::Tensor m = detail::bool_mask(fn, response_mask, returns, "token_level_rewards");
  torch::Tensor b = detail::floating(baseline_scores).to(returns.scalar_type()).unsqueeze(1);
  torch::Tensor advantages = torch::where(m, returns - b, torch::zeros({}, returns.options()));
  return {advantages, returns};
}

}  // namespace rlwb::core::algorithms
