#include "core/algorithms/group_advantages.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {
namespace {

// Per-row view of its group: the row's score, whether it is a sample, and
// its group's sample count, score sum, mean and unbiased std.
struct GroupView {
  torch::Tensor mask;   // bool [batch, response_len]
  torch::Tensor score;  // [batch], 0 for non-samples
  torch::Tensor is_sample;
  torch::Tensor count;
  torch::Tensor sum;
  torch::Tensor mean;
  torch::Tensor std;
};

GroupView group_view(std::string_view fn, const torch::Tensor& token_level_rewards,
                     const torch::Tensor& response_mask, const torch::Tensor& group_index) {
  detail::check_dim(fn, "token_level_rewards", token_level_rewards, 2);
  GroupView g;
  g.mask = detail::bool_mask(fn, response_mask, token_level_rewards, "token_level_rewards");
  detail::check_rows(fn, "group_index", group_index, token_level_rewards.size(0));
  if (torch::isFloatingType(group_index.scalar_type()) || group_index.scalar_type() == torch::kBool) {
    detail::fail(fn, "group_index must be an integer tensor (one group id per row), got " +
                         std::string(c10::toString(group_index.scalar_type())));
  }
  torch::Tensor r = detail::zero_padding(token_level_rewards, g.mask);
  g.is_sample = g.mask.any(1);
  g.score = r.sum(1);
  torch::Tensor zero = torch::zeros({}, r.options());

  auto [groups, inverse, counts_unused] =
      at::_unique2(group_index.to(g.score.device()), /*sorted=*/true, /*return_inverse=*/true,
                   /*return_counts=*/false);
  torch::Tensor w = g.is_sample.to(r.scalar_type());
  torch::Tensor count = torch::zeros({groups.size(0)}, r.options()).index_add_(0, inverse, w);
  torch::Tensor sum = torch::zeros({groups.size(0)}, r.options()).index_add_(0, inverse, g.score);
  torch::Tensor mean = sum / count.clamp_min(1);
  torch::Tensor dev = torch::where(g.is_sample, g.score - mean.index_select(0, inverse), zero);
  torch::Tensor squares = torch::zeros({groups.size(0)}, r.options()).index_add_(0, inverse, dev * dev);
  torch::Tensor var = torch::where(count > 1, squares / (count - 1).clamp_min(1), zero);

  g.count = count.index_select(0, inverse);
  g.sum = sum.index_select(0, inverse);
  g.mean = mean.index_select(0, inverse);
  g.std = var.sqrt().index_select(0, inverse);
  return g;
}

// Broadcasts per-row advantages to valid tokens; non-samples get 0.
torch::Tensor to_tokens(const GroupView& g, const torch::Tensor& row_advantage) {
  torch::Tensor zero = torch::zeros({}, row_advantage.options());
  torch::Tensor a = torch::where(g.is_sample, row_advantage, zero);
  return torch::where(g.mask, a.unsqueeze(1), zero);
}

AdvantageResult same_as_returns(torch::Tensor advantages) { return {advantages, advantages}; }

}  // namespace

AdvantageResult grpo_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                               const torch::Tensor& group_index, const GrpoOptions& options) {
  constexpr const char* fn = "grpo_advantage";
  if (!(options.epsilon >= 0)) {
    detail::fail(fn, "epsilon must be >= 0, got " + std::to_string(options.epsilon));
  }
  at::NoGradGuard no_grad;
  GroupView g = group_view(fn, token_level_rewards, response_mask, group_index);
  torch::Tensor alone = g.count <= 1;
  torch::Tensor mean = torch::where(alone, torch::zeros_like(g.mean), g.mean);
  torch::Tensor a = g.score - mean;
  if (options.normalize_by_std) {
    torch::Tensor std = torch::where(alone, torch::ones_like(g.std), g.std);
    a = a / (std + options.epsilon);
  }
  return same_as_returns(to_tokens(g, a));
}

AdvantageResult dr_grpo_advantage(const torch::Tensor& token_level_rewards,
                                  const torch::Tensor& response_mask, const torch::Tensor& group_index) {
  return grpo_advantage(token_level_rewards, response_mask, group_index,
                        {.epsilon = 0.0, .normalize_by_std = false});
}

AdvantageResult rloo_advantage(const torch::Tensor& token_level_rewards, const torch::Tensor& response_mask,
                               const torch::Tensor& group_index) {
  at::NoGradGuard no_grad;
  GroupView g = group_view("rloo_advantage", token_level_rewards, response_mask, group_index);
  torch::Tensor others_mean = (g.sum - g.score) / (g.count - 1).clamp_min(1);
  torch::Tensor a = torch::where(g.count > 1, g.score - others_mean, g.score);
  return same_as_returns(to_tokens(g, a));
}

AdvantageResult reinforce_pp_baseline_advantage(const torch::Tensor& token_level_rewards,
                                                const torch::Tensor& response_mask,
                                                const torch::Tensor& group_index) {
  at::NoGradGuard no_grad;
  GroupView g =
      group_view("reinforce_pp_baseline_advantage", token_level_rewards, response_mask, group_index);
  torch::Tensor a = torch::where(g.count > 1, g.score - g.mean, g.score);
  return same_as_returns(masked_whiten(to_tokens(g, a), g.mask));
}

}  // namespace rlwb::core::algorithms
