#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <stdexcept>

namespace rlwb::rewards {

std::vector<std::string> text_column(const core::Batch& input, const core::RewardCallContext& ctx, size_t index,
                                     const std::string& module) {
  if (index >= ctx.in.size())
    throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): needs at least " +
                             std::to_string(index + 1) + " input columns (see docs/rewards.md)");
  const std::string& name = ctx.in[index];
  if (!input.has_objects(name))
    throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): input column '" + name +
                             "' must be an object column of text");
  std::vector<std::string> out;
  for (const auto& v : input.objects(name)) out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

torch::Tensor response_mask_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                   const std::string& module) {
  for (auto it = ctx.in.rbegin(); it != ctx.in.rend(); ++it)
    if (input.has_tensor(*it) && input.tensor(*it).dim() == 2) return input.tensor(*it);
  throw std::runtime_error("reward node '" + ctx.node + "' (" + module +
                           "): the last input column must be the response mask [rows, response_len]");
}

core::Batch score_output(const std::vector<double>& scores, std::vector<nlohmann::json> details,
                         const torch::Tensor& response_mask, const core::RewardCallContext& ctx) {
  const int64_t rows = response_mask.size(0);
  if (static_cast<int64_t>(scores.size()) != rows)
    throw std::runtime_error("reward node '" + ctx.node + "': " + std::to_string(scores.size()) +
                             " scores for " + std::to_string(rows) + " rows");
  if (ctx.out.empty())
    throw std::runtime_error("reward node '" + ctx.node + "': needs an output column for the token-level scores");
  auto mask = response_mask.to(torch::kInt64);
  auto lengths = mask.sum(1);
  auto token_scores = torch::zeros({rows, response_mask.size(1)}, torch::kFloat32);
  auto acc = token_scores.accessor<float, 2>();
  auto len = lengths.accessor<int64_t, 1>();
  double total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    total += scores[i];
    // An empty response has no last token: its score goes to position 0.
    acc[i][std::max<int64_t>(len[i] - 1, 0)] = static_cast<float>(scores[i]);
  }
  core::Batch out;
  out.set_tensor(ctx.out[0], token_scores);
  if (ctx.out.size() > 1) out.set_objects(ctx.out[1], std::move(details));
  out.meta()["metrics"] = {{"reward/" + ctx.node + "/mean", rows ? total / rows : 0.0}};
  return out;
}

}  // namespace rlwb::rewards
