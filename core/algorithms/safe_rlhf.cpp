#include "core/algorithms/safe_rlhf.h"

#include <algorithm>
#include <cmath>

#include "core/algorithms/input_checks.h"

namespace rlwb::core::algorithms {

LagrangeMultiplier::LagrangeMultiplier(const LagrangeOptions& options)
    : options_(options), lambda_(options.lambda_init) {
  constexpr const char* fn = "LagrangeMultiplier";
  bool log_step = options.step == LagrangeStep::kLogLambda;
  if (!std::isfinite(options.lambda_init) ||
      (log_step ? !(options.lambda_init > 0) : !(options.lambda_init >= 0))) {
    detail::fail(fn, std::string("lambda_init must be ") +
                         (log_step ? "> 0 with the log-lambda step (log 0 is -inf)" : ">= 0") + ", got " +
                         std::to_string(options.lambda_init));
  }
  if (!(options.lr > 0) || !std::isfinite(options.lr)) {
    detail::fail(fn, "lr must be > 0, got " + std::to_string(options.lr));
  }
  if (!std::isfinite(options.cost_threshold)) {
    detail::fail(fn, "cost_threshold must be finite");
  }
  if (options.lambda_max && !(*options.lambda_max > 0)) {
    detail::fail(fn, "lambda_max must be > 0 (or unset), got " + std::to_string(*options.lambda_max));
  }
  if (!(options.kp >= 0) || !std::isfinite(options.kp)) {
    detail::fail(fn, "kp (the proportional gain) must be >= 0, got " + std::to_string(options.kp));
  }
  if (options.lambda_max) lambda_ = std::min(lambda_, *options.lambda_max);
  log_lambda_ = log_step ? std::log(lambda_) : 0.0;
}

double LagrangeMultiplier::applied(double mean_cost) const {
  if (!std::isfinite(mean_cost)) {
    detail::fail("LagrangeMultiplier::applied", "mean_cost is not finite (" + std::to_string(mean_cost) +
                                                    "); check the cost model's scores");
  }
  double lambda = lambda_ + options_.kp * std::max(0.0, mean_cost - options_.cost_threshold);
  return options_.lambda_max ? std::min(lambda, *options_.lambda_max) : lambda;
}

double LagrangeMultiplier::update(double mean_cost) {
  if (!std::isfinite(mean_cost)) {
    detail::fail("LagrangeMultiplier::update", "mean_cost is not finite (" + std::to_string(mean_cost) +
                                                   "); check the cost model's scores");
  }
  double violation = mean_cost - options_.cost_threshold;
  if (options_.step == LagrangeStep::kLogLambda) {
    log_lambda_ += options_.lr * violation;
    if (options_.lambda_max) log_lambda_ = std::min(log_lambda_, std::log(*options_.lambda_max));
    lambda_ = std::exp(log_lambda_);
  } else {
    lambda_ = std::max(0.0, lambda_ + options_.lr * violation);
    if (options_.lambda_max) lambda_ = std::min(lambda_, *options_.lambda_max);
  }
  last_cost_ = mean_cost;
  return lambda_;
}

Metrics LagrangeMultiplier::metrics() const {
  return {{"safe_rlhf/lambda", lambda_},
          {"safe_rlhf/episode_cost", last_cost_},
          {"safe_rlhf/cost_violation", last_cost_ - options_.cost_threshold}};
}

torch::Tensor safe_rlhf_advantage(const torch::Tensor& reward_advantages,
                                  const torch::Tensor& cost_advantages, const torch::Tensor& response_mask,
                                  double lambda) {
  constexpr const char* fn = "safe_rlhf_advantage";
  detail::check_dim(fn, "reward_advantages", reward_advantages, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, reward_advantages, "reward_advantages");
  detail::check_same_shape(fn, "cost_advantages", cost_advantages, "reward_advantages", reward_advantages);
  if (!(lambda >= 0) || !std::isfinite(lambda)) {
    detail::fail(fn, "lambda must be finite and >= 0, got " + std::to_string(lambda));
  }
  torch::Tensor a_r = detail::zero_padding(reward_advantages, m);
  torch::Tensor a_c = detail::zero_padding(cost_advantages, m).to(a_r.scalar_type());
  return (a_r - lambda * a_c) / (1.0 + lambda);
}

}  // namespace rlwb::core::algorithms
