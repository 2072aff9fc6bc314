// Safe-RLHF (Dai et al. 2024): maximise reward subject to
// E[cost] <= cost_threshold, by Lagrangian relaxation. The controller owns a
// LagrangeMultiplier, updates it once per step with the batch's mean cost
// (from the cost model), and combines the reward and cost advantages (each
// from its own critic through gae.h) with safe_rlhf_advantage.
//
// Multiplier update, gradient ascent on lambda * (J_c - d), with
// J_c = mean_cost and d = cost_threshold (the gradient w.r.t. lambda is
// J_c - d: lambda rises while the constraint is violated):
//   log-lambda step (default): log lambda += lr * (J_c - d), i.e.
//       lambda *= exp(lr * (J_c - d)). lambda stays > 0, and the step
//       does not shrink as lambda -> 0 (the derivative w.r.t. log lambda,
//       lambda (J_c - d), is divided by lambda, as Adam's normalisation
//       does in the reference implementation).
//   lambda step: lambda = max(0, lambda + lr * (J_c - d)), projected
//       gradient ascent; lambda can reach 0.
// Either way lambda is then capped at lambda_max when set.
//
// PI control (Stooke et al. 2020, "Responsive Safety in Reinforcement
// Learning by PID Lagrangian Methods"): the ascent above is the integral
// term alone, and it oscillates: while the constraint holds, lambda decays
// (geometrically with the log step), so the cost overshoots before lambda
// has grown back. With a proportional gain kp > 0, the multiplier a step
// applies is
//   lambda_applied = lambda + kp * max(0, J_c - d)
// with J_c that step's own cost: a violation is answered in the step that
// shows it, not only after lambda has integrated it. kp = 0 is the plain
// ascent.
//
// Combined advantage, per valid token (0 under the mask):
//   A = (A_reward - lambda * A_cost) / (1 + lambda)
#pragma once

#include <torch/types.h>

#include <optional>

#include "core/algorithms/algorithm_error.h"
#include "core/config/algorithm_names.h"

namespace rlwb::core::algorithms {

struct LagrangeOptions {
  double lambda_init = 1.0;                         // > 0 for kLogLambda, >= 0 for kLambda
  double lr = 0.1;                                  // step size, > 0
  double cost_threshold = 0.0;                      // d: the allowed mean cost per episode
  std::optional<double> lambda_max = std::nullopt;  // cap, > 0; nullopt: no cap
  double kp = 0.0;                                  // proportional gain, >= 0 (PI control)
  LagrangeStep step = LagrangeStep::kLogLambda;
};

class LagrangeMultiplier {
 public:
  // Throws AlgorithmError for options out of range.
  explicit LagrangeMultiplier(const LagrangeOptions& options = {});

  double value() const { return lambda_; }

  // The multiplier to apply to a step whose mean cost is `mean_cost`:
  // value() plus the proportional term, capped at lambda_max. Call before
  // update(mean_cost).
  double applied(double mean_cost) const;

  // One ascent step with J_c = mean_cost (finite); returns the new lambda.
  double update(double mean_cost);

  // safe_rlhf/lambda, safe_rlhf/episode_cost (J_c of the last update) and
  // safe_rlhf/cost_violation (J_c - d), after at least one update.
  Metrics metrics() const;

 private:
  LagrangeOptions options_;
  double lambda_;
  double log_lambda_;  // the state of the log-lambda step (stays finite if lambda underflows)
  double last_cost_ = 0;
};

// reward_advantages, cost_advantages, response_mask: [batch, response_len];
// lambda >= 0.
torch::Tensor safe_rlhf_advantage(const torch::Tensor& reward_advantages,
                                  const torch::Tensor& cost_advantages, const torch::Tensor& response_mask,
                                  double lambda);

}  // namespace rlwb::core::algorithms
