// Masked reductions over [batch, response_len] tensors, and placing a
// sequence score on its last response token. Every other file in
// core/algorithms builds on these; workers and the controller use them for
// metrics (critic/advantages/mean, ...).
//
// Conventions for every function here:
//   - `mask` has exactly the shape of `values`; nonzero (or true) = valid.
//   - Values under the mask are never read: NaN or inf there changes nothing,
//     and no gradient flows to them.
//   - An empty selection gives 0, never NaN (an empty row has mean 0).
#pragma once

#include <torch/types.h>

#include <optional>

namespace rlwb::core::algorithms {

// sum_i m_i x_i. dim: reduce only that dimension (it is removed);
// nullopt: reduce everything to a 0-dim tensor.
torch::Tensor masked_sum(const torch::Tensor& values, const torch::Tensor& mask,
                         std::optional<int64_t> dim = std::nullopt);

// sum_i m_i x_i / sum_i m_i, and 0 where sum_i m_i = 0.
torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask,
                          std::optional<int64_t> dim = std::nullopt);

// sum_i m_i (x_i - mean)^2 / (n - 1) with n = sum_i m_i (unbiased, as
// torch.var), or / n when unbiased = false. 0 when n <= 1 (unbiased) or
// n = 0 (biased): one sample has no spread.
torch::Tensor masked_var(const torch::Tensor& values, const torch::Tensor& mask,
                         std::optional<int64_t> dim = std::nullopt, bool unbiased = true);

// (x - mean) / sqrt(var + eps) over all valid entries together (mean and
// unbiased var from masked_mean/masked_var over the whole tensor), 0 under
// the mask. shift_mean = false adds the mean back (scales only).
torch::Tensor masked_whiten(const torch::Tensor& values, const torch::Tensor& mask, bool shift_mean = true,
                            double eps = 1e-8);

// For each row of a [batch, response_len] mask: the index of its last valid
// position, or -1 for a row without one. int64 [batch].
torch::Tensor last_valid_index(const torch::Tensor& response_mask);

// Token-level scores from sequence scores (verl's reward placement):
// out[b, t] = scores[b] if t = last_valid_index(mask)[b], else 0.
// scores: [batch]; response_mask: [batch, response_len]. A row with an
// empty mask gets all zeros (its score is dropped).
torch::Tensor place_score_at_last_token(const torch::Tensor& scores, const torch::Tensor& response_mask);

}  // namespace rlwb::core::algorithms
