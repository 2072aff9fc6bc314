#include "core/algorithms/advantage_estimator.h"

#include "core/algorithms/discounted_returns.h"
#include "core/algorithms/gae.h"
#include "core/algorithms/group_advantages.h"
#include "core/algorithms/input_checks.h"

namespace rlwb::core::algorithms {
namespace {

const torch::Tensor& require(AdvantageEstimator estimator, std::string_view input, const torch::Tensor& t,
                             std::string_view what) {
  if (!t.defined()) {
    detail::fail("compute_advantages", "advantage estimator '" + std::string(to_string(estimator)) +
                                           "' needs '" + std::string(input) + "' (" + std::string(what) +
                                           "); provide it");
  }
  return t;
}

}  // namespace

AdvantageEstimator parse_advantage_estimator(std::string_view name) {
  for (const auto& [known_name, estimator] : advantage_estimator_names())
    if (known_name == name) return estimator;
  std::string known;
  for (const auto& [known_name, estimator] : advantage_estimator_names())
    known += (known.empty() ? "" : ", ") + known_name;
  detail::fail("parse_advantage_estimator",
               "unknown advantage estimator '" + std::string(name) + "'; use one of " + known);
}

std::string_view to_string(AdvantageEstimator estimator) {
  for (const auto& [name, value] : advantage_estimator_names())
    if (value == estimator) return name;
  return "unknown";
}

std::vector<std::string_view> required_inputs(AdvantageEstimator estimator) {
  switch (estimator) {
    case AdvantageEstimator::kGae:
      return {"values"};
    case AdvantageEstimator::kGrpo:
    case AdvantageEstimator::kDrGrpo:
    case AdvantageEstimator::kRloo:
    case AdvantageEstimator::kReinforcePlusPlusBaseline:
      return {"group_index"};
    case AdvantageEstimator::kRemax:
      return {"baseline_scores"};
    case AdvantageEstimator::kReinforcePlusPlus:
      return {};
  }
  return {};
}

AdvantageResult compute_advantages(AdvantageEstimator estimator, const AdvantageInputs& in,
                                   const AdvantageOptions& options) {
  const torch::Tensor& rewards = in.token_level_rewards;
  const torch::Tensor& mask = in.response_mask;
  require(estimator, "token_level_rewards", rewards, "per-token rewards");
  require(estimator, "response_mask", mask, "the response mask");
  auto group_index = [&] {
    return require(estimator, "group_index", in.group_index, "one group id per row");
  };
  switch (estimator) {
    case AdvantageEstimator::kGae:
      return gae_advantage(rewards, require(estimator, "values", in.values, "the critic's values"), mask,
                           {.gamma = options.gamma, .lambda = options.lambda, .whiten = options.whiten_gae});
    case AdvantageEstimator::kGrpo:
      return grpo_advantage(rewards, mask, group_index(), {.epsilon = options.grpo_epsilon});
    case AdvantageEstimator::kDrGrpo:
      return dr_grpo_advantage(rewards, mask, group_index());
    case AdvantageEstimator::kRloo:
      return rloo_advantage(rewards, mask, group_index());
    case AdvantageEstimator::kRemax:
      return remax_advantage(
          rewards, require(estimator, "baseline_scores", in.baseline_scores, "the greedy response's reward"),
          mask);
    case AdvantageEstimator::kReinforcePlusPlus:
      return reinforce_pp_advantage(rewards, mask, options.gamma);
    case AdvantageEstimator::kReinforcePlusPlusBaseline:
      return reinforce_pp_baseline_advantage(rewards, mask, group_index());
  }
  detail::fail("compute_advantages", "unknown advantage estimator");
}

}  // namespace rlwb::core::algorithms
