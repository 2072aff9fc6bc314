// The critic, reward-model and cost-model roles: a transformer with a value
// head. Methods and their ports (registered below with them):
//   critic.values   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask  out values
//   critic.update   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask, values, returns
//                             -- PPO epochs of the clipped value loss; args {metrics_prefix}
//                             (critic) names a second critic's metrics (Safe-RLHF's cost critic)
//   reward_model.score / cost_model.score
//                   split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask
//                             out token_level_scores (reward_model) / cost_scores (cost_model)
//                             -- the sequence score on the last response token; args
//                             {probability: true} gives sigmoid(score) instead
//   reward_model.update / cost_model.update
//                   split_dp_mesh  in prompts, chosen, rejected (text), optional
//                             chosen_sign, rejected_sign [B] (+1 / -1), pair_weight [B]
//                             (0 leaves a row's pair term out, not its sign terms: a tie
//                             among online pairs, builtin.preference_pairs)
//                             -- one optimizer step of the pairwise (Bradley-Terry) loss
//                             -log sigmoid(s_chosen - s_rejected); with signs (Safe-RLHF's
//                             cost model: +1 unsafe, -1 safe) also -log sigmoid(sign * s) of
//                             each response, so the score's sign classifies. The signs may
//                             also be args {chosen_sign, rejected_sign} for every row.
//   reward_model.evaluate_pairs / cost_model.evaluate_pairs
//                   split_dp_mesh  the same inputs -- the metrics alone, no step
//                             (held-out pairs in trainer.eval: val/<prefix>/pair_accuracy)
//     Metrics <prefix>/{loss, pair_accuracy, margin, sign_accuracy, grad_norm, lr}; the
//     prefix is the role (reward_model, cost_model) or args {metrics_prefix}.
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
  std::string role;  // critic, reward_model, cost_model: the metrics' default prefix
  std::unique_ptr<TrainState> state;
  std::string metrics_prefix(const CallContext& ctx) const { return ctx.args.value("metrics_prefix", role); }
};

// A creator for role `name` (critic, reward_model, cost_model).
RoleFactory create_value(const std::string& name) {
  return [name](const nlohmann::json& config, WorkerEnv& env) -> std::unique_ptr<Role> {
    auto role = std::make_unique<ValueRole>();
    role->role = name;
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
Batch score(ValueRole& r, const Batch& in, CallContext& ctx, const std::string& port) {
  c10::InferenceMode guard;
  r.net->eval();
  auto seq = r.sequences(in);
  auto mask = r.input(in, "response_mask");
  auto scores = model::sequence_scores(r.net, seq.input_ids, seq.attention_mask);
  // A cost model trained with signs scores log-odds of "unsafe": its
  // probability is what a cost threshold of a share of responses bounds.
  if (ctx.args.value("probability", false)) scores = torch::sigmoid(scores);
  Batch out;
  out.set_tensor(port, alg::place_score_at_last_token(scores, mask));
  return out;
}

// The pairwise loss and its counts over one call's rows (pair_update,
// evaluate_pairs).
// `compared` counts the rows whose pair is compared (pair_weight not 0);
// the sign terms count every row.
struct PairTotals {
  double loss = 0, right = 0, margin = 0, signs_right = 0, compared = 0;
  std::vector<double> values() const { return {loss, right, margin, signs_right, compared}; }
  static PairTotals of(const std::vector<double>& v) { return {v.at(0), v.at(1), v.at(2), v.at(3), v.at(4)}; }
};

// Per-row signs of the chosen and rejected responses: the ports, else the
// args, else none (undefined tensors).
std::pair<torch::Tensor, torch::Tensor> pair_signs(const ValueRole& r, const Batch& in,
                                                   const CallContext& ctx, int64_t rows) {
  const bool ports = in.has_tensor("chosen_sign"), args = ctx.args.contains("chosen_sign");
  if (ports != in.has_tensor("rejected_sign") || args != ctx.args.contains("rejected_sign"))
    throw RoleConfigError(r.role +
                          ".update: chosen_sign and rejected_sign come together (both ports or both args)");
  if (ports)
    return {r.input(in, "chosen_sign").to(torch::kFloat32).reshape({rows}),
            r.input(in, "rejected_sign").to(torch::kFloat32).reshape({rows})};
  if (args)
    return {torch::full({rows}, ctx.args["chosen_sign"].get<double>(),
                        torch::dtype(torch::kFloat32).device(r.device)),
            torch::full({rows}, ctx.args["rejected_sign"].get<double>(),
                        torch::dtype(torch::kFloat32).device(r.device))};
  return {};
}

// One pass over this rank's pairs in micro-batches; `pairs` gets the real
// rows of every rank. With `train`, each micro-batch's loss is
// back-propagated: the pair terms averaged over the compared pairs of
// every rank, the sign terms over the rows (without pair_weight the two
// counts are the same, so a row with weight 0 is as if it were not there
// when there are no signs), and the last one's backward overlaps the
// gradient sum, with this rank's totals riding along: no other collective
// may run until step() collects them, so the totals returned are this
// rank's own then. Without `train`, they are summed over the ranks here.
PairTotals pair_pass(ValueRole& r, const Batch& in, CallContext& ctx, bool train, double& pairs) {
  const auto& prompts = in.objects("prompts");
  torch::Tensor chosen_mask, rejected_mask;
  auto chosen = r.text_sequences(prompts, in.objects("chosen"), chosen_mask);
  auto rejected = r.text_sequences(prompts, in.objects("rejected"), rejected_mask);
  const int64_t rows = chosen_mask.size(0);
  auto real = without_padding_rows(in, torch::ones({rows, 1}, torch::kFloat32)).reshape({rows}).to(r.device);
  // A row with pair_weight 0 (a tie) keeps its sign terms, not its pair.
  auto compared = real;
  if (in.has_tensor("pair_weight"))
    compared =
        real * (r.input(in, "pair_weight").to(torch::kFloat32).reshape({rows}) != 0).to(torch::kFloat32);
  auto [chosen_sign, rejected_sign] = pair_signs(r, in, ctx, rows);
  pairs = all_reduce_sum(ctx.env, real.sum().item<double>());
  const double compared_pairs =
      in.has_tensor("pair_weight") ? all_reduce_sum(ctx.env, compared.sum().item<double>()) : pairs;
  PairTotals t;
  bool summing = false;
  for (auto [b, e] : row_ranges(rows, r.options.micro_batch_size)) {
    auto sc =
        model::sequence_scores(r.net, chosen.input_ids.slice(0, b, e), chosen.attention_mask.slice(0, b, e));
    auto sr = model::sequence_scores(r.net, rejected.input_ids.slice(0, b, e),
                                     rejected.attention_mask.slice(0, b, e));
    auto w = real.slice(0, b, e), c = compared.slice(0, b, e);
    auto diff = sc - sr;
    auto loss = (-torch::log_sigmoid(diff) * c).sum() / std::max(compared_pairs, 1.0);
    if (chosen_sign.defined()) {
      auto cs = chosen_sign.slice(0, b, e), rs = rejected_sign.slice(0, b, e);
      auto sign_terms = -torch::log_sigmoid(cs * sc) - torch::log_sigmoid(rs * sr);
      loss = loss + (sign_terms * w).sum() / std::max(pairs, 1.0);
      t.signs_right +=
          (((cs * sc.detach() > 0).to(torch::kFloat32) + (rs * sr.detach() > 0).to(torch::kFloat32)) * w)
              .sum()
              .item<double>();
    }
    t.loss += loss.item<double>();
    t.right += ((diff.detach() > 0).to(torch::kFloat32) * c).sum().item<double>();
    t.margin += (diff.detach() * c).sum().item<double>();
    t.compared += c.sum().item<double>();
    if (!train) continue;
    if (e == rows) {
      r.state->sum_during_next_backward(ctx.env, t.values());
      summing = true;
    }
    loss.backward();
  }
  if (train) {
    if (!summing) r.state->sum_during_next_backward(ctx.env, t.values());  // no rows: the same collectives
    return t;
  }
  std::vector<double> totals = t.values();
  for (double& x : totals) x = all_reduce_sum(ctx.env, x);
  return PairTotals::of(totals);
}

nlohmann::json pair_metrics(const std::string& prefix, const PairTotals& t, double pairs, bool signs) {
  const double n = std::max(t.compared, 1.0);
  nlohmann::json m = {{prefix + "/loss", t.loss},
                      {prefix + "/pair_accuracy", t.right / n},
                      {prefix + "/margin", t.margin / n}};
  if (signs) m[prefix + "/sign_accuracy"] = t.signs_right / (2 * std::max(pairs, 1.0));
  return m;
}

bool has_signs(const Batch& in, const CallContext& ctx) {
  return in.has_tensor("chosen_sign") || ctx.args.contains("chosen_sign");
}

Batch pair_update(ValueRole& r, const Batch& in, CallContext& ctx) {
  if (!r.state) r.state = r.make_train_state(r.options.optim);
  r.net->train();
  double pairs = 0;
  // The rank's totals ride along with the gradient sum and come back summed.
  std::vector<double> totals = pair_pass(r, in, ctx, true, pairs).values();
  auto [grad_norm, lr] = r.state->step(ctx.env, &totals);
  const std::string p = r.metrics_prefix(ctx);
  auto m = pair_metrics(p, PairTotals::of(totals), pairs, has_signs(in, ctx));
  m[p + "/grad_norm"] = grad_norm;
  m[p + "/lr"] = lr;
  Batch out;
  out.meta()["metrics"] = m;
  return out;
}

Batch evaluate_pairs(ValueRole& r, const Batch& in, CallContext& ctx) {
  c10::InferenceMode guard;
  r.net->eval();
  double pairs = 0;
  PairTotals t = pair_pass(r, in, ctx, false, pairs);
  Batch out;
  out.meta()["metrics"] = pair_metrics(r.metrics_prefix(ctx), t, pairs, has_signs(in, ctx));
  return out;
}

Batch update(ValueRole& r, const Batch& in, CallContext& ctx) {
  const auto& ppo = r.options.ppo;
  if (!r.state) r.state = r.make_train_state(r.options.optim);
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
  // A second critic (Safe-RLHF's cost critic) logs under its own prefix.
  const std::string prefix = r.metrics_prefix(ctx);
  std::map<std::string, double> named;
  for (auto& [k, x] : sums) named[k.rfind("critic/", 0) == 0 ? prefix + k.substr(6) : k] = x;
  Batch out;
  out.meta()["metrics"] = sum_metrics_over_ranks(ctx.env, named, updates);
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
    spec.methods.push_back(keeping_rows(
        method<V>("values", DispatchMode::split_dp_mesh,
                  core::call_ports(sequence_ports(), {core::out_port("values", "[B,R]")}), values)));
    spec.methods.push_back(
        method<V>("update", DispatchMode::split_dp_mesh, core::call_ports(std::move(update_in), {}), update));
  } else {
    spec.methods.push_back(keeping_rows(method<V>(
        "score", DispatchMode::split_dp_mesh,
        core::call_ports(sequence_ports(), {core::out_port(score_port, "[B,R] the score on the last token")}),
        [score_port](V& r, const Batch& in, CallContext& ctx) { return score(r, in, ctx, score_port); })));
    const std::vector<core::PortSpec> pair_in = {
        core::required_port("prompts", "[B] the prompts (text or chat messages)"),
        core::required_port("chosen", "[B] the response that should score higher (text)"),
        core::required_port("rejected", "[B] the response that should score lower (text)"),
        core::optional_port("chosen_sign", "[B] +1 / -1: the sign the chosen response's score should have"),
        core::optional_port("rejected_sign",
                            "[B] +1 / -1: the sign the rejected response's score should have"),
        core::optional_port("pair_weight", "[B] 0 leaves the row's pair term out (a tie), 1 keeps it")};
    spec.methods.push_back(
        method<V>("update", DispatchMode::split_dp_mesh, core::call_ports(pair_in, {}), pair_update));
    spec.methods.push_back(method<V>("evaluate_pairs", DispatchMode::split_dp_mesh,
                                     core::call_ports(pair_in, {}), evaluate_pairs));
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
