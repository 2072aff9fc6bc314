// The critic, reward-model and cost-model roles: a transformer with a value
// head. Methods and their ports (registered below with them):
//   critic.values   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask  out values
//   critic.update   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask, values, returns
//                             -- PPO epochs of the clipped value loss
//   reward_model.score / cost_model.score
//                   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask
//                             out token_level_scores (reward_model) / cost_scores (cost_model)
//                             -- the sequence score on the last response token
//   save_checkpoint / load_checkpoint broadcast, args {dir}; loading
//   a causal-LM checkpoint (the SFT actor) keeps its backbone and starts a
//   fresh value head.
//   save_state / load_state  broadcast, args {dir} -- this rank's weights, optimizer,
//                            random state (roles/role_state.h; rlwb run --resume)
// Config: core/config/model_options.h (model, tokenizer, optim, ppo).
#include "workers/roles/model_roles.h"

#include "core/algorithms/algorithms.h"
#include "workers/model/sequence_scores.h"
#include "workers/roles/model_setup.h"
#include "workers/roles/role_state.h"

namespace rlwb::workers::roles {
namespace {

using core::Batch;
using core::DispatchMode;
namespace alg = core::algorithms;

struct ValueRole : ModelRole {
  std::unique_ptr<TrainState> state;
};

// A creator for role `name` (critic, reward_model, cost_model).
RoleFactory create_value(const std::string& name) {
  return [name](const nlohmann::json& config, WorkerEnv& env) -> std::unique_ptr<Role> {
    auto role = std::make_unique<ValueRole>();
    role->init(name, config, env, model::Head::kValue);
    return role;
  };
}

Batch values(ValueRole& r, const Batch& in, CallContext&) {
  c10::InferenceMode guard;
  r.net->eval();
  auto seq = r.sequences(in);
  std::vector<torch::Tensor> parts;
  for (auto [b, e] : row_ranges(seq.input_ids.size(0), r.options.micro_batch_size))
    parts.push_back(model::response_values(r.net, rows_of(seq, b, e)));
  Batch out;
  out.set_tensor("values", parts.empty() ? torch::zeros({0, seq.response_length}) : torch::cat(parts));
  return out;
}

// The sequence scores as output port `port` (token_level_scores, cost_scores).
Batch score(ValueRole& r, const Batch& in, const std::string& port) {
  c10::InferenceMode guard;
  r.net->eval();
  auto seq = r.sequences(in);
  auto mask = r.input(in, "response_mask");
  auto scores = model::sequence_scores(r.net, seq.input_ids, seq.attention_mask);
  Batch out;
  out.set_tensor(port, alg::place_score_at_last_token(scores, mask));
  return out;
}

Batch update(ValueRole& r, const Batch& in, CallContext& ctx) {
  const auto& ppo = r.options.ppo;
  if (!r.state) r.state = std::make_unique<TrainState>(r.net, r.options.optim);
  r.net->train();
  auto seq = r.sequences(in);
  auto mask = without_padding_rows(in, r.input(in, "response_mask").to(torch::kFloat32));
  auto old_values = r.input(in, "values");
  auto returns = r.input(in, "returns");
  alg::ValueLossOptions vl;
  vl.clip_range_value = ppo.cliprange_value;
  const auto agg_mode = ppo.loss_agg_mode;
  const int64_t rows = seq.input_ids.size(0);
  const int64_t mini = local_mini_batch_rows(ppo, rows, ctx.env);
  const int64_t micro = r.options.micro_batch_size;
  std::map<std::string, double> sums;
  double updates = 0;
  for (int64_t epoch = 0; epoch < ppo.epochs; ++epoch) {
    for (auto [mb, me] : row_ranges(rows, mini)) {
      const auto counts = global_counts(ctx.env, mask.slice(0, mb, me));
      vl.aggregation = alg::LossAggregation(agg_mode, counts.loss_normalizer(agg_mode));
      std::map<std::string, double> m;
      bool summing = false;  // the gradient sum overlaps the mini-batch's last backward
      for (auto [b, e] : row_ranges(me - mb, micro)) {
        b += mb, e += mb;
        auto v = model::response_values(r.net, rows_of(seq, b, e));
        auto loss =
            alg::value_loss(v, old_values.slice(0, b, e), returns.slice(0, b, e), mask.slice(0, b, e), vl);
        if (e == me) {
          r.state->sum_during_next_backward(ctx.env);
          summing = true;
        }
        loss.loss.backward();
        // Shares of the mini-batch's values (see sum_metrics_over_ranks).
        double share = mask.slice(0, b, e).sum().item<double>() / std::max(1.0, counts.tokens);
        for (auto& [k, x] : loss.metrics()) m[k] += (k == "critic/vf_loss" ? x : x * share);
      }
      if (!summing) r.state->sum_during_next_backward(ctx.env);  // no rows: the same collectives
      auto [grad_norm, lr] = r.state->step(ctx.env);
      m["critic/grad_norm"] = grad_norm / data_parallel_size(ctx.env);
      m["critic/lr"] = lr / data_parallel_size(ctx.env);
      for (auto& [k, x] : m) sums[k] += x;
      ++updates;
    }
  }
  // As verl: how well the rollout-time values explained the returns (over
  // this rank's rows; the metric is the mean over the ranks).
  sums["critic/vf_explained_var"] = alg::explained_variance(returns, old_values, mask).item<double>() *
                                    updates / data_parallel_size(ctx.env);
  Batch out;
  out.meta()["metrics"] = sum_metrics_over_ranks(ctx.env, sums, updates);
  return out;
}

Batch save(ValueRole& r, const Batch&, CallContext& ctx) {
  r.save(checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

Batch load(ValueRole& r, const Batch&, CallContext& ctx) {
  r.load(checkpoint_dir_arg(ctx), model::Head::kValue, ctx.env);
  r.state.reset();
  return Batch{};
}

Batch save_state(ValueRole& r, const Batch&, CallContext& ctx) {
  save_role_state(r, {{"optim", &r.state, r.options.optim}}, checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

Batch load_state(ValueRole& r, const Batch&, CallContext& ctx) {
  load_role_state(r, {{"optim", &r.state, r.options.optim}}, checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

// A value-head role: trainable (the critic: values, update) or a scorer
// whose `score` writes output port `score_port`.
RoleSpec value_role(const std::string& name, const std::string& description, bool trainable,
                    const std::string& score_port = "") {
  using V = ValueRole;
  RoleSpec spec;
  spec.name = name;
  spec.description = description;
  spec.create = create_value(name);
  const core::CallPorts none = core::call_ports({}, {});
  spec.methods = {method<V>("save_checkpoint", DispatchMode::broadcast, none, save),
                  method<V>("load_checkpoint", DispatchMode::broadcast, none, load),
                  method<V>("save_state", DispatchMode::broadcast, none, save_state),
                  method<V>("load_state", DispatchMode::broadcast, none, load_state)};
  if (trainable) {
    auto update_in = sequence_ports();
    update_in.push_back(core::required_port("values", "[B,R] the values at sampling"));
    update_in.push_back(core::required_port("returns", "[B,R] the targets"));
    spec.methods.push_back(method<V>("values", DispatchMode::split_dp_mesh,
                                     core::call_ports(sequence_ports(), {core::out_port("values", "[B,R]")}),
                                     values));
    spec.methods.push_back(
        method<V>("update", DispatchMode::split_dp_mesh, core::call_ports(std::move(update_in), {}), update));
  } else {
    spec.methods.push_back(method<V>(
        "score", DispatchMode::split_dp_mesh,
        core::call_ports(sequence_ports(), {core::out_port(score_port, "[B,R] the score on the last token")}),
        [score_port](V& r, const Batch& in, CallContext&) { return score(r, in, score_port); }));
  }
  return spec;
}

}  // namespace

void register_value_roles(RoleRegistry& registry) {
  registry.add(
      value_role("critic", "value model: per-token values, trained with the clipped value loss", true));
  registry.add(
      value_role("reward_model", "neural reward model: one score per response", false, "token_level_scores"));
  registry.add(
      value_role("cost_model", "neural cost model (Safe-RLHF): one cost per response", false, "cost_scores"));
}

}  // namespace rlwb::workers::roles
