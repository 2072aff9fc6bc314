// One entry point for every advantage estimator, chosen by name, for the
// controller's advantage node (the graph file says `advantage: grpo`). Each
// estimator is documented with its formula in its own header: gae.h,
// discounted_returns.h, group_advantages.h.
#pragma once

#include <torch/types.h>

#include <string_view>
#include <vector>

#include "core/algorithms/advantage_result.h"
#include "core/config/algorithm_names.h"

namespace rlwb::core::algorithms {

// verl's names as listed above; throws AlgorithmError listing them otherwise.
AdvantageEstimator parse_advantage_estimator(std::string_view name);
std::string_view to_string(AdvantageEstimator estimator);

// The optional inputs an estimator needs, by the field names of
// AdvantageInputs ("values", "group_index", "baseline_scores"), so a graph
// check can ask for them before a run starts.
std::vector<std::string_view> required_inputs(AdvantageEstimator estimator);

struct AdvantageInputs {
  torch::Tensor token_level_rewards;  // [batch, response_len], always
  torch::Tensor response_mask;        // [batch, response_len], always
  torch::Tensor values;               // [batch, response_len], gae
  torch::Tensor group_index;          // [batch] integer, grpo/dr_grpo/rloo/rpp-baseline
  torch::Tensor baseline_scores;      // [batch], remax (greedy response's reward)
};

struct AdvantageOptions {
  double gamma = 1.0;          // gae, reinforce_plus_plus
  double lambda = 1.0;         // gae
  bool whiten_gae = true;      // gae
  double grpo_epsilon = 1e-6;  // grpo
};

// Runs the chosen estimator. Throws AlgorithmError naming the estimator and
// the missing input when one it needs is undefined.
AdvantageResult compute_advantages(AdvantageEstimator estimator, const AdvantageInputs& inputs,
                                   const AdvantageOptions& options = {});

}  // namespace rlwb::core::algorithms
