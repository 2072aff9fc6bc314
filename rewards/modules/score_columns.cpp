#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <stdexcept>

namespace rlwb::rewards {

void require_score_method(const std::string& method, const std::string& reward, const std::string& type) {
  if (method != "score")
    throw std::runtime_error("reward '" + reward + "' (" + type + ") has no method '" + method +
                             "'; its method is 'score'");
}

const std::vector<nlohmann::json>& object_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                                 size_t index, const std::string& module) {
  const std::string where = "reward node '" + ctx.node + "' (" + module + ")";
  if (index + 1 >= ctx.in.size())  // the last input is the response mask
    throw std::runtime_error(
        where + ": needs at least " + std::to_string(index + 2) + " input columns (the " +
        "response text, what the type reads, then the response mask; see docs/rewards.md); " +
        "the node has " + std::to_string(ctx.in.size()));
  const std::string& name = ctx.in[index];
  if (input.has_tensor(name))
    throw std::runtime_error(
        where + ": input column '" + name + "' (position " + std::to_string(index + 1) +
        ") is a tensor column; it must be an object column (one text or JSON value per row)");
  if (!input.has_objects(name))
    throw std::runtime_error(where + ": input column '" + name +
                             "' is not in the batch; give the node a column " +
                             "that an earlier node or the task writes");
  return input.objects(name);
}

std::vector<std::string> text_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                     size_t index, const std::string& module) {
  std::vector<std::string> out;
  for (const auto& v : object_column(input, ctx, index, module))
    out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

torch::Tensor response_mask_column(const core::Batch& input, const core::RewardCallContext& ctx,
                                   const std::string& module) {
  const std::string where = "reward node '" + ctx.node + "' (" + module + ")";
  if (ctx.in.empty())
    throw std::runtime_error(where +
                             ": has no input columns; the last one must be the response mask [rows, " +
                             "response_len] (see docs/rewards.md)");
  const std::string& name = ctx.in.back();
  if (!input.has(name))
    throw std::runtime_error(where + ": input column '" + name +
                             "' is not in the batch; the last input must be " +
                             "the response mask [rows, response_len]");
  if (!input.has_tensor(name) || input.tensor(name).dim() != 2)
    throw std::runtime_error(where + ": the last input column '" + name +
                             "' must be the response mask, a tensor " + "[rows, response_len]; it is " +
                             (input.has_tensor(name)
                                  ? "a tensor of " + std::to_string(input.tensor(name).dim()) + " dimensions"
                                  : std::string("an object column")));
  return input.tensor(name);
}

core::Batch score_output(const std::vector<double>& scores, std::vector<nlohmann::json> details,
                         const torch::Tensor& response_mask, const core::RewardCallContext& ctx) {
  const int64_t rows = response_mask.size(0);
  if (static_cast<int64_t>(scores.size()) != rows)
    throw std::runtime_error("reward node '" + ctx.node + "': " + std::to_string(scores.size()) +
                             " scores for " + std::to_string(rows) + " rows");
  if (ctx.out.empty())
    throw std::runtime_error("reward node '" + ctx.node +
                             "': needs an output column for the token-level scores");
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
