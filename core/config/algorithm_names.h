// The algorithm choices a graph file names (advantage estimators, KL
// estimators and controllers, loss aggregation modes), as enums with their
// names (and Safe-RLHF's multiplier step), without LibTorch: the configuration parser (core/config) checks
// the names before anything starts, and the tensor code (advantage_estimator.h, kl.h, kl_controller.h,
// loss_aggregation.h) parses them from the same tables. Names are verl's.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rlwb::core::algorithms {

template <typename E>
using NameTable = std::vector<std::pair<std::string, E>>;

enum class AdvantageEstimator {
  kGae,                        // "gae": gae_advantage; needs values
  kGrpo,                       // "grpo": grpo_advantage; needs group_index
  kDrGrpo,                     // "dr_grpo": dr_grpo_advantage; needs group_index
  kRloo,                       // "rloo": rloo_advantage; needs group_index
  kRemax,                      // "remax": remax_advantage; needs baseline_scores
  kReinforcePlusPlus,          // "reinforce_plus_plus": reinforce_pp_advantage
  kReinforcePlusPlusBaseline,  // "reinforce_plus_plus_baseline"; needs group_index
};
inline const NameTable<AdvantageEstimator>& advantage_estimator_names() {
  static const NameTable<AdvantageEstimator> names = {
      {"gae", AdvantageEstimator::kGae},
      {"grpo", AdvantageEstimator::kGrpo},
      {"dr_grpo", AdvantageEstimator::kDrGrpo},
      {"rloo", AdvantageEstimator::kRloo},
      {"remax", AdvantageEstimator::kRemax},
      {"reinforce_plus_plus", AdvantageEstimator::kReinforcePlusPlus},
      {"reinforce_plus_plus_baseline", AdvantageEstimator::kReinforcePlusPlusBaseline},
  };
  return names;
}

enum class KlEstimator { kK1, kK2, kK3, kAbs };
// Each estimator's canonical name first, then verl's aliases.
inline const NameTable<KlEstimator>& kl_estimator_names() {
  static const NameTable<KlEstimator> names = {
      {"k1", KlEstimator::kK1},   {"kl", KlEstimator::kK1}, {"k2", KlEstimator::kK2},
      {"mse", KlEstimator::kK2},  {"k3", KlEstimator::kK3}, {"low_var_kl", KlEstimator::kK3},
      {"abs", KlEstimator::kAbs},
  };
  return names;
}

enum class KlControlType { kFixed, kAdaptive };
inline const NameTable<KlControlType>& kl_control_names() {
  static const NameTable<KlControlType> names = {{"fixed", KlControlType::kFixed},
                                                 {"adaptive", KlControlType::kAdaptive}};
  return names;
}

// Safe-RLHF's Lagrange multiplier step (safe_rlhf.h): ascent on log lambda
// (multiplicative) or on lambda itself (projected at 0).
enum class LagrangeStep { kLogLambda, kLambda };
inline const NameTable<LagrangeStep>& lagrange_step_names() {
  static const NameTable<LagrangeStep> names = {{"log", LagrangeStep::kLogLambda},
                                                {"linear", LagrangeStep::kLambda}};
  return names;
}

enum class LossAggMode { kTokenMean, kSeqMeanTokenSum, kSeqMeanTokenMean, kSeqMeanTokenSumNorm };
inline const NameTable<LossAggMode>& loss_agg_mode_names() {
  static const NameTable<LossAggMode> names = {
      {"token-mean", LossAggMode::kTokenMean},
      {"seq-mean-token-sum", LossAggMode::kSeqMeanTokenSum},
      {"seq-mean-token-mean", LossAggMode::kSeqMeanTokenMean},
      {"seq-mean-token-sum-norm", LossAggMode::kSeqMeanTokenSumNorm},
  };
  return names;
}

}  // namespace rlwb::core::algorithms
