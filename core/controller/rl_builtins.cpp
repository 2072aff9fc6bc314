#include "core/controller/rl_builtins.h"

#include "core/algorithms/algorithms.h"

#include <torch/torch.h>

#include <map>

namespace rlwb::core {
namespace alg = algorithms;

namespace {

torch::Tensor need(const Batch& in, const std::string& port, const std::string& node,
                   const std::string& why) {
  if (!in.has_tensor(port))
    throw std::runtime_error("builtin." + node + " needs a tensor at input port '" + port + "' (" + why +
                             "); bind it in the node's in: [" + port + "] or in: {" + port + ": <column>}");
  return in.tensor(port);
}

torch::Tensor optional(const Batch& in, const std::string& name) {
  return in.has_tensor(name) ? in.tensor(name) : torch::Tensor();
}

void put_stats(nlohmann::json& metrics, const std::string& prefix, const torch::Tensor& values) {
  auto v = values.to(torch::kFloat64);
  if (v.numel() == 0) return;
  metrics[prefix + "/mean"] = v.mean().item<double>();
  metrics[prefix + "/max"] = v.max().item<double>();
  metrics[prefix + "/min"] = v.min().item<double>();
}

torch::Tensor masked_values(const torch::Tensor& x, const torch::Tensor& mask) {
  return x.masked_select(mask.to(torch::kBool));
}

}  // namespace

Batch compute_advantage(const Batch& in, BuiltinContext& ctx) {
  const auto& settings = ctx.trainer.algorithm;
  auto scores = need(in, "token_level_scores", "compute_advantage", "the rewards").to(torch::kFloat32);
  auto mask = need(in, "response_mask", "compute_advantage", "which tokens are real");
  auto maskf = mask.to(torch::kFloat32);
  nlohmann::json metrics = nlohmann::json::object();

  torch::Tensor rewards = scores;
  if (settings.use_kl_in_reward) {
    auto lp = need(in, "old_log_probs", "compute_advantage", "use_kl_in_reward");
    auto ref = need(in, "ref_log_probs", "compute_advantage", "use_kl_in_reward");
    const auto& kc = settings.kl_ctrl;
    alg::KlControlOptions ko;
    ko.type = kc.type;
    ko.kl_coef = kc.kl_coef;
    ko.target_kl = kc.target_kl;
    ko.horizon = kc.horizon;
    // The coefficient carries over from the last step (adaptive control).
    double coef = ctx.state.is_object() ? ctx.state.value("kl_coef", ko.kl_coef) : ko.kl_coef;
    ko.kl_coef = coef;
    alg::KlController controller(ko);
    auto kl = alg::apply_kl_in_reward(scores, lp, ref, maskf, controller.value(), settings.kl_penalty);
    rewards = kl.token_level_rewards;
    for (auto& [k, v] : kl.metrics()) metrics[k] = v;
    controller.update(kl.current_kl, scores.size(0));
    ctx.state = {{"kl_coef", controller.value()}};
  }

  const auto estimator = settings.adv_estimator;
  alg::AdvantageInputs inputs;
  inputs.token_level_rewards = rewards;
  inputs.response_mask = maskf;
  inputs.values = optional(in, "values");
  inputs.group_index = optional(in, "group_index");
  if (auto b = optional(in, "baseline_scores"); b.defined())
    inputs.baseline_scores = b.dim() == 2 ? b.sum(1) : b;
  alg::AdvantageOptions options;
  options.gamma = settings.gamma;
  options.lambda = settings.lam;
  auto result = alg::compute_advantages(estimator, inputs, options);
  if (!settings.norm_adv_by_std_in_grpo && estimator == alg::AdvantageEstimator::kGrpo)
    result = alg::compute_advantages(alg::AdvantageEstimator::kDrGrpo, inputs, options);

  auto lengths = maskf.sum(1);
  // A second advantage node (Safe-RLHF's cost) logs under its own prefix.
  const std::string p = ctx.args.value("metrics_prefix", "critic");
  put_stats(metrics, p + "/score", scores.sum(1));
  put_stats(metrics, p + "/rewards", rewards.sum(1));
  put_stats(metrics, p + "/advantages", masked_values(result.advantages, mask));
  put_stats(metrics, p + "/returns", masked_values(result.returns, mask));
  if (inputs.values.defined())
    metrics[p + "/values/mean"] = masked_values(inputs.values, mask).mean().item<double>();
  put_stats(metrics, "response_length", lengths);
  metrics["response_length/clip_ratio"] = (lengths >= mask.size(1)).to(torch::kFloat64).mean().item<double>();

  Batch out;
  out.set_tensor("advantages", result.advantages);
  out.set_tensor("returns", result.returns);
  out.meta()["metrics"] = metrics;
  return out;
}

Batch safe_rlhf_advantage(const Batch& in, BuiltinContext& ctx) {
  const auto& settings = ctx.trainer.algorithm.safe_rlhf;
  auto reward_adv = need(in, "reward_advantages", "safe_rlhf_advantage", "advantages from the reward");
  auto cost_adv = need(in, "cost_advantages", "safe_rlhf_advantage", "advantages from the cost");
  auto cost = need(in, "cost_scores", "safe_rlhf_advantage", "the episode costs");
  auto mask = need(in, "response_mask", "safe_rlhf_advantage", "which tokens are real").to(torch::kFloat32);
  alg::LagrangeOptions lo;
  lo.cost_threshold = settings.cost_threshold;
  lo.lambda_init =
      ctx.state.is_object() ? ctx.state.value("lambda", settings.lambda_init) : settings.lambda_init;
  lo.lr = settings.lambda_lr;
  lo.lambda_max = settings.lambda_max;
  lo.kp = settings.lambda_kp;
  lo.step = settings.lambda_step;
  alg::LagrangeMultiplier lambda(lo);
  double mean_cost = (cost.dim() == 2 ? cost.sum(1) : cost).to(torch::kFloat64).mean().item<double>();
  // The advantage of this step uses the multiplier before this step's
  // update, plus the proportional term of this step's own cost.
  double used = lambda.applied(mean_cost);
  lambda.update(mean_cost);
  ctx.state = {{"lambda", lambda.value()}};
  Batch out;
  out.set_tensor("advantages", alg::safe_rlhf_advantage(reward_adv, cost_adv, mask, used));
  nlohmann::json metrics = nlohmann::json::object();
  for (auto& [k, v] : lambda.metrics()) metrics[k] = v;
  metrics["safe_rlhf/lambda_applied"] = used;
  metrics["critic/cost/mean"] = mean_cost;
  out.meta()["metrics"] = metrics;
  return out;
}

Batch preference_pairs(const Batch& in, BuiltinContext& ctx) {
  const std::string node = "preference_pairs";
  auto per_row = [](const torch::Tensor& t) {
    auto v = t.to(torch::kFloat64);
    return v.dim() == 2 ? v.sum(1) : v.reshape({-1});
  };
  if (!in.has_objects("response_text"))
    throw std::runtime_error(
        "builtin.preference_pairs needs text at input port 'response_text' (the sampled "
        "responses); bind it in the node's in: [response_text]");
  const auto& texts = in.objects("response_text");
  auto scores = per_row(need(in, "scores", node, "the annotator's verdict on each response"));
  auto groups = need(in, "group_index", node, "which rows share a prompt").to(torch::kInt64).reshape({-1});
  const int64_t rows = in.rows();  // every column has them (Batch)
  std::vector<double> model;
  if (in.has_tensor("model_scores")) {
    auto m = per_row(in.tensor("model_scores")).contiguous();
    model.assign(m.data_ptr<double>(), m.data_ptr<double>() + rows);
  }

  // The rows of each prompt, in row order.
  std::map<int64_t, std::vector<int64_t>> members;
  auto g = groups.accessor<int64_t, 1>();
  for (int64_t i = 0; i < rows; ++i) members[g[i]].push_back(i);
  auto s = scores.accessor<double, 1>();

  const double threshold = ctx.args.value("sign_threshold", 0.5);
  auto sign = [&](int64_t row) { return s[row] > threshold ? 1.0f : -1.0f; };
  std::vector<nlohmann::json> chosen(rows), rejected(rows);
  auto weight = torch::zeros({rows}, torch::kFloat32);
  auto chosen_sign = torch::zeros({rows}, torch::kFloat32),
       rejected_sign = torch::zeros({rows}, torch::kFloat32);
  double labelled = 0, model_right = 0;
  for (const auto& [group, idx] : members) {
    const std::size_t n = idx.size();
    for (std::size_t k = 0; k < n; ++k) {
      const int64_t a = idx[k], b = idx[(k + 1) % n];
      const bool better = s[a] >= s[b];
      chosen[a] = texts[better ? a : b];
      rejected[a] = texts[better ? b : a];
      chosen_sign[a] = sign(better ? a : b);
      rejected_sign[a] = sign(better ? b : a);
      // A group of two compares its rows once; a lone row has no partner.
      if (n < 2 || (n == 2 && k == 1) || s[a] == s[b]) continue;
      weight[a] = 1.0f;
      ++labelled;
      if (!model.empty() && model[better ? a : b] > model[better ? b : a]) ++model_right;
    }
  }
  nlohmann::json metrics = {{"pairs/labelled", labelled},
                            {"pairs/per_prompt", members.empty() ? 0.0 : labelled / members.size()}};
  if (!model.empty() && labelled > 0) metrics["pairs/model_accuracy"] = model_right / labelled;
  Batch out;
  out.set_objects("chosen", std::move(chosen));
  out.set_objects("rejected", std::move(rejected));
  out.set_tensor("pair_weight", weight);
  out.set_tensor("chosen_sign", chosen_sign);
  out.set_tensor("rejected_sign", rejected_sign);
  out.meta()["metrics"] = metrics;
  return out;
}

// How far the sampling model's log-probs are from the training model's on
// the same tokens (verl's rollout_probs_diff): with generation on a pool of
// its own, 0 up to rounding when the weights streamed after the last update
// reached it; any lag or mismatch of the two shows here.
Batch rollout_mismatch(const Batch& in, BuiltinContext&) {
  auto rollout = need(in, "rollout_log_probs", "rollout_mismatch", "the sampling model's log-probs");
  auto actor = need(in, "old_log_probs", "rollout_mismatch", "the training model's log-probs");
  auto mask = need(in, "response_mask", "rollout_mismatch", "which tokens are real");
  if (rollout.sizes() != actor.sizes())
    throw std::runtime_error("builtin.rollout_mismatch: rollout_log_probs and old_log_probs differ in shape");
  nlohmann::json metrics = nlohmann::json::object();
  put_stats(metrics, "rollout/log_prob_diff", masked_values((rollout - actor).abs(), mask));
  Batch out;
  out.meta()["metrics"] = metrics;
  return out;
}

CallPorts compute_advantage_ports() {
  return call_ports(
      {
          required_port("token_level_scores", "[B,R] scores from a reward module or reward model"),
          required_port("response_mask", "[B,R] 1 on response tokens"),
          optional_port("old_log_probs", "[B,R] the policy's log-probs (use_kl_in_reward)"),
          optional_port("ref_log_probs", "[B,R] the reference's log-probs (use_kl_in_reward)"),
          optional_port("values", "[B,R] the critic's values (gae)"),
          optional_port("group_index", "[B] the prompt of each row (grpo, rloo, ...)"),
          optional_port("baseline_scores", "[B,R] or [B] the greedy response's score (remax)"),
      },
      {out_port("advantages", "[B,R]"), out_port("returns", "[B,R]")});
}

CallPorts safe_rlhf_advantage_ports() {
  return call_ports(
      {
          required_port("reward_advantages", "[B,R] advantages from the reward"),
          required_port("cost_advantages", "[B,R] advantages from the cost"),
          required_port("cost_scores", "[B,R] or [B] the episode costs"),
          required_port("response_mask", "[B,R] 1 on response tokens"),
      },
      {out_port("advantages", "[B,R] the Lagrangian mix of the two")});
}

CallPorts preference_pairs_ports() {
  return call_ports(
      {
          required_port("response_text", "[B] the sampled responses (text)"),
          required_port("scores", "[B,R] or [B] the annotator's verdict on each response (higher is better)"),
          required_port("group_index", "[B] the prompt of each row"),
          optional_port("model_scores", "[B,R] or [B] the reward model's scores of the same responses"),
      },
      {out_port("chosen", "[B] the better response of the row's pair (text)"),
       out_port("rejected", "[B] the worse one (text)"),
       out_port("pair_weight", "[B] 1 for a pair to learn, 0 for a tie"),
       out_port("chosen_sign",
                "[B] +1 when the annotator's score of the chosen response is above "
                "args.sign_threshold (0.5), else -1"),
       out_port("rejected_sign", "[B] the same for the rejected response")});
}

CallPorts rollout_mismatch_ports() {
  return call_ports(
      {required_port("rollout_log_probs", "[B,R] the sampling model's log-probs"),
       required_port("old_log_probs", "[B,R] the training model's log-probs of the same tokens"),
       required_port("response_mask", "[B,R] 1 on response tokens")},
      {});
}

void add_rl_builtins(Builtins& builtins) {
  builtins["rollout_mismatch"] = {rollout_mismatch, rollout_mismatch_ports()};
  builtins["compute_advantage"] = {compute_advantage, compute_advantage_ports()};
  builtins["safe_rlhf_advantage"] = {safe_rlhf_advantage, safe_rlhf_advantage_ports()};
  builtins["preference_pairs"] = {preference_pairs, preference_pairs_ports()};
}

}  // namespace rlwb::core
