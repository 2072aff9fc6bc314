// Outcome advantages relative to a group of responses to the same prompt:
// GRPO (Shao et al. 2024), Dr.GRPO (Liu et al. 2025), RLOO (Ahmadian et al.
// 2024) and REINFORCE++-baseline. Used by advantage_estimator.h.
//
// Shared rules:
//   - A row's score is s_b = sum_t m[b,t] r[b,t] (its total token-level
//     reward; with a score placed on the last token that is the score).
//   - group_index: [batch] integer tensor; rows with equal values form a
//     group (e.g. the n samples of one prompt). Groups need not be
//     contiguous.
//   - Rows whose response mask is empty are not samples: they are left out
//     of every group statistic and get advantage 0.
//   - A group of one has no peers: mean is taken as 0 and std as 1, so its
//     advantage is its own score (verl's convention).
//   - The sequence advantage a_b is broadcast to the row's valid tokens
//     (0 under the mask); `returns` equals `advantages` (no critic).
// Group statistics use float sums in index order on CPU; on CUDA the
// accumulation order (and so the last bits) may vary between runs.
#pragma once

#include <torch/types.h>

#include "core/algorithms/advantage_result.h"

namespace rlwb::core::algorithms {

struct GrpoOptions {
  double epsilon = 1e-6;         // added to the group std
  bool normalize_by_std = true;  // false: Dr.GRPO
};

// GRPO: a_b = (s_b - mean_g) / (std_g + epsilon), std the unbiased (n - 1)
// standard deviation of the group's scores (as torch.std). With
// normalize_by_std = false: a_b = s_b - mean_g.
AdvantageResult grpo_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                               const torch::Tensor& group_index, const GrpoOptions& options = {});

// Dr.GRPO's advantage: grpo_advantage without std normalisation,
// a_b = s_b - mean_g. (Its other half, no per-sequence length
// normalisation, is LossAggMode::kSeqMeanTokenSumNorm.)
AdvantageResult dr_grpo_advantage(const torch::Tensor& token_level_rewards,
                                  const torch::Tensor& response_mask, const torch::Tensor& group_index);

// RLOO: a_b = s_b - (sum_{j in g, j != b} s_j) / (n_g - 1), the
// leave-one-out mean of the other samples in the group.
AdvantageResult rloo_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                               const torch::Tensor& group_index);

// REINFORCE++-baseline: a_b = s_b - mean_g broadcast to valid tokens, then
// masked_whiten over all valid tokens of the batch.
AdvantageResult reinforce_pp_baseline_advantage(const torch::Tensor& token_level_rewards,
                                                const torch::Tensor& response_mask,
                                                const torch::Tensor& group_index);

}  // namespace rlwb::core::algorithms
