#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <stdexcept>

namespace rlwb::rewards {

void require_score_method(const std::string& method, const std::string& reward, const std::string& type) {
  if (method != "score")
    throw std::runtime_error("reward '" + reward + "' (" + type + ") has no method '" + method +
                             "'; its method is 'score'");
}

core::MethodPorts score_method(std::vector<core::PortSpec> reads, bool text_required) {
  std::vector<core::PortSpec> in;
  const std::string text_doc = "one response text per row, an object column";
  in.push_back(text_required ? core::required_port("response_text", text_doc)
                             : core::optional_port("response_text", text_doc));
  for (auto& port : reads) in.push_back(std::move(port));
  in.push_back(core::required_port("response_mask", "[B,R] 1 on response tokens"));
  return {{"score",
           core::call_ports(std::move(in),
                            {core::out_port("token_level_scores", "[B,R] each row's score on its last token"),
                             core::out_port("reward_details", "one JSON object per row")})}};
}

const std::vector<nlohmann::json>& object_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                               const std::string& port, const std::string& module) {
  const std::string where = "reward node '" + ctx.node + "' (" + module + ")";
  if (input.has_tensor(port))
    throw std::runtime_error(where + ": input port '" + port +
                             "' is bound to a tensor column; it must be an object column (one text or JSON "
                             "value per row)");
  if (!input.has_objects(port))
    throw std::runtime_error(where + ": needs input port '" + port + "'; bind it: in: [..., " + port +
                             "] or in: {" + port + ": <column>, ...} (docs/rewards.md)");
  return input.objects(port);
}

std::vector<std::string> text_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                   const std::string& port, const std::string& module) {
  std::vector<std::string> out;
  for (const auto& v : object_port(input, ctx, port, module))
    out.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

torch::Tensor response_mask_port(const core::Batch& input, const core::RewardCallContext& ctx,
                                 const std::string& module) {
  const std::string where = "reward node '" + ctx.node + "' (" + module + ")";
  const std::string port = "response_mask";
  if (!input.has(port))
    throw std::runtime_error(where +
                             ": needs input port 'response_mask' [rows, response_len]; bind it: in: "
                             "[..., response_mask] or in: {response_mask: <column>, ...}");
  if (!input.has_tensor(port) || input.tensor(port).dim() != 2)
    throw std::runtime_error(
        where + ": input port 'response_mask' must be a tensor [rows, response_len]; it is " +
        (input.has_tensor(port) ? "a tensor of " + std::to_string(input.tensor(port).dim()) + " dimensions"
                                : std::string("an object column")));
  return input.tensor(port);
}

core::Batch score_output(const std::vector<double>& scores, std::vector<nlohmann::json> details,
                         const torch::Tensor& response_mask, const core::RewardCallContext& ctx) {
  const int64_t rows = response_mask.size(0);
  if (static_cast<int64_t>(scores.size()) != rows)
    throw std::runtime_error("reward node '" + ctx.node + "': " + std::to_string(scores.size()) +
                             " scores for " + std::to_string(rows) + " rows");
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
  out.set_tensor("token_level_scores", token_scores);
  out.set_objects("reward_details", std::move(details));
  out.meta()["metrics"] = {{"reward/" + ctx.node + "/mean", rows ? total / rows : 0.0}};
  return out;
}

}  // namespace rlwb::rewards
