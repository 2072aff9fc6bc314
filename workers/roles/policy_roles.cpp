// The actor and reference roles: a causal language model with the
// tokenizer. Methods and their ports (registered below with them):
// (split_dp_mesh: each data-parallel group gets its rows, every
// tensor-parallel rank of it the same rows; rows a split adds to even out
// the chunks count in no loss or metric. split_generation_mesh: the same
// over the generation replicas when the model generates with its own
// layout, parallel.generate -- the 3D-HybridEngine gathers the weights for
// the call and gives the memory back after it)
//   generate      split_generation_mesh  in prompts      out responses, response_mask, response_text,
//                                                    old_log_probs, prompt_ids, prompt_mask
//                 args {greedy: true} decodes greedily (ReMax's baseline, evaluation)
//   log_prob      split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask
//                                out old_log_probs (actor) / ref_log_probs (reference)
//   update        split_dp_mesh  in prompt_ids, prompt_mask, responses, response_mask, old_log_probs,
//                                    advantages, ref_log_probs (with ppo.use_kl_loss)  -- PPO epochs (actor
//                                    only)
//   sft_update    split_dp_mesh  in prompts, answers  -- one supervised step (actor only)
//   save_checkpoint / load_checkpoint broadcast, args {dir}
//   save_state / load_state           broadcast, args {dir} -- this rank's weights, optimizers,
//                                     random state (roles/role_state.h; rlwb run --resume)
//   stream_weights  broadcast  the actor's weights to a rollout model on another pool (the actor
//                              sends, the rollout receives; roles/weight_link.h)
// Role rollout: generate and log_prob as the actor's, with the weights an
// actor streams to it after every RL step (config.weight_stream).
// Config: core/config/model_options.h (model, tokenizer, optim, sft,
// rollout, ppo), parsed by ModelRole::init.
#include "workers/roles/model_roles.h"

#include "core/algorithms/algorithms.h"
#include "core/rpc/column_padding.h"
#include "workers/hybrid_engine/hybrid_engine.h"
#include "workers/model/generation.h"
#include "workers/model/model_error.h"
#include "workers/model/sequence_scores.h"
#include "workers/roles/model_setup.h"
#include "workers/roles/role_state.h"
#include "workers/roles/weight_link.h"

namespace rlwb::workers::roles {
namespace {

using core::Batch;
using core::DispatchMode;
namespace alg = core::algorithms;

struct PolicyRole : ModelRole {
  std::unique_ptr<TrainState> rl_state, sft_state;
  // HybridFlow's 3D-HybridEngine when the model generates with another
  // layout than it trains (env.generation() is folded): it owns the
  // split parameters' storage, so the optimizers update them in place.
  std::unique_ptr<hybrid_engine::HybridEngine> engine;
  int engines_made = 0;
  // To or from a rollout model on another pool (stream_weights).
  WeightLink link;

  // Collective over the pool; after init and after every checkpoint load
  // (which replaces the network).
  void make_engine(WorkerEnv& env) {
    engine.reset();
    const core::Mesh& train = env.mesh;
    const core::Mesh& generate = env.generation();
    if (!generate.folded()) return;
    hybrid_engine::HybridLayout layout({.pp = train.pp, .tp = train.tp, .dp = train.dp},
                                       {.pp = generate.pp, .tp = generate.tp});
    if (layout.generation_mesh() != generate)
      throw RoleConfigError(
          "models." + env.model +
          ".parallel.generate: the controller dispatches generation over replicas that are not "
          "the engine's (a controller and workers of different versions?)");
    // A sub-group's name keys its rendezvous in the pool's store, where an
    // earlier engine's addresses stay: each engine names its own.
    engine = std::make_unique<hybrid_engine::HybridEngine>(
        net, env.spmd(), layout, env.model + "/engine" + std::to_string(++engines_made));
    parameter_storage = model::ParameterStorage::kInPlace;
  }
};

// A creator for role `name` (actor or reference: the config's sections differ).
RoleFactory create_policy(const std::string& name) {
  return [name](const nlohmann::json& config, WorkerEnv& env) -> std::unique_ptr<Role> {
    auto role = std::make_unique<PolicyRole>();
    role->init(name, config, env, model::Head::kLanguageModel);
    role->make_engine(env);
    return role;
  };
}

// Generation in the engine's layout: gathered for the call, given back
// after it (also when it throws, so training never runs on a gathered model).
model::GenerationResult generate_with_engine(hybrid_engine::HybridEngine& engine, const PromptIds& prompts,
                                             const model::GenerationOptions& options) {
  struct BackToTraining {
    hybrid_engine::HybridEngine& engine;
    ~BackToTraining() { engine.to_training(); }
  } back{engine};
  engine.to_generation();
  return engine.generation_model().generate(prompts.ids, prompts.mask, options);
}

Batch generate(PolicyRole& r, const Batch& in, CallContext& ctx) {
  const auto& rollout = r.options.rollout;
  model::GenerationOptions options;
  options.sampling.greedy = ctx.args.value("greedy", false);
  options.sampling.temperature = rollout.temperature;
  options.sampling.top_k = rollout.top_k;
  options.sampling.top_p = rollout.top_p;
  options.max_new_tokens = rollout.max_new_tokens;
  // Different on every step and generation replica, the same on every
  // rerun, and alike on the tp ranks of a replica (they sample together).
  const int64_t step = ctx.context.value("step", int64_t{0});
  const int64_t group = ctx.env.generation().dp_index(ctx.env.rank);
  options.seed = static_cast<uint64_t>(r.options.seed * 1000003 + step * 9973 + group * 31 + 7);
  auto prompts =
      tokenize_prompts(*r.tokenizer, in.objects("prompts"), r.chat_template.get(), r.chat_template_refused);
  r.net->eval();
  auto result = r.engine ? generate_with_engine(*r.engine, prompts, options)
                         : model::generate(r.net, prompts.ids, prompts.mask, options);
  Batch out;
  out.set_tensor("responses", result.responses);
  out.set_tensor("response_mask", result.response_mask);
  // The rest only when the node binds them (decoding costs, and replies
  // travel over the wire).
  if (ctx.out.wants("response_text"))
    out.set_objects("response_text", decode_responses(*r.tokenizer, result.responses, result.response_mask));
  if (ctx.out.wants("old_log_probs")) out.set_tensor("old_log_probs", result.log_probs);
  if (ctx.out.wants("prompt_ids")) out.set_tensor("prompt_ids", prompts.ids);
  if (ctx.out.wants("prompt_mask")) out.set_tensor("prompt_mask", prompts.mask);
  // The widths are this rank's own (its longest prompt, its longest
  // response): the controller pads the ranks' replies alike before joining.
  const auto& ids = r.tokenizer->special_ids();
  const double pad = static_cast<double>(ids.pad >= 0 ? ids.pad : 0);
  auto mark = [&out](const char* column, core::PadSide side, double value) {
    if (out.has_tensor(column)) core::mark_padded_column(out, column, side, value);
  };
  mark("prompt_ids", core::PadSide::left, pad);
  mark("prompt_mask", core::PadSide::left, 0);
  mark("responses", core::PadSide::right, pad);
  mark("response_mask", core::PadSide::right, 0);
  mark("old_log_probs", core::PadSide::right, 0);
  return out;
}

// Log-probs of the responses, as output port `port` (the actor's
// old_log_probs, the reference's ref_log_probs).
Batch log_prob(PolicyRole& r, const Batch& in, const std::string& port) {
  c10::InferenceMode guard;
  r.net->eval();
  auto seq = r.sequences(in);
  const double temperature = r.options.rollout.temperature;
  std::vector<torch::Tensor> parts;
  for (auto [b, e] : row_ranges(seq.input_ids.size(0), r.options.micro_batch_size))
    parts.push_back(model::response_log_probs(r.net, rows_of(seq, b, e), temperature).log_probs);
  Batch out;
  out.set_tensor(port, parts.empty() ? torch::zeros({0, seq.response_length}) : torch::cat(parts));
  return out;
}

Batch update(PolicyRole& r, const Batch& in, CallContext& ctx) {
  const auto& ppo = r.options.ppo;
  if (!r.rl_state) r.rl_state = r.make_train_state(r.options.optim);
  r.net->train();
  auto seq = r.sequences(in);
  auto mask = without_padding_rows(in, r.input(in, "response_mask").to(torch::kFloat32));
  auto old_lp = r.input(in, "old_log_probs");
  auto adv = r.input(in, "advantages");
  const bool use_kl_loss = ppo.use_kl_loss;
  torch::Tensor ref_lp;
  if (use_kl_loss) {
    if (!in.has_tensor("ref_log_probs"))
      throw std::runtime_error(r.where +
                               ".ppo.use_kl_loss is true: the update node needs the reference log-probs at "
                               "input port 'ref_log_probs'");
    ref_lp = r.input(in, "ref_log_probs");
  }
  alg::PolicyLossOptions pl;
  pl.clip_low = ppo.clip_ratio_low.value_or(ppo.clip_ratio);
  pl.clip_high = ppo.clip_ratio_high.value_or(ppo.clip_ratio);
  pl.clip_ratio_c = ppo.clip_ratio_c;
  const auto agg_mode = ppo.loss_agg_mode;
  const double entropy_coeff = ppo.entropy_coeff;
  const double kl_coef = ppo.kl_loss_coef;
  const auto kl_type = ppo.kl_loss_type;
  const double temperature = r.options.rollout.temperature;
  const int64_t epochs = ppo.epochs;
  const int64_t rows = seq.input_ids.size(0);
  const int64_t mini = local_mini_batch_rows(ppo, rows, ctx.env);
  const int64_t micro = r.options.micro_batch_size;

  // One collective per optimizer step: each rank back-propagates its part
  // of the mini-batch loss as a sum (normaliser 1), and its loss count and
  // metric sums ride along with the gradients' all-reduce; the summed
  // gradient is then divided by the global count (TrainState::step), which
  // gives the mini-batch gradient, as dp=1 computes it. Metric sums: the
  // loss as it is, ratios over a micro-batch times its tokens; after the
  // sum, the loss is divided by the global count, ratios by the global
  // tokens, so no split changes them.
  std::vector<std::string> metric_keys = {"actor/entropy", "actor/pg_clipfrac", "actor/pg_clipfrac_lower",
                                          "actor/pg_loss", "actor/ppo_kl"};
  if (use_kl_loss) metric_keys.push_back("actor/kl_loss");
  const auto sum_aggregation = alg::LossAggregation(agg_mode, 1.0);
  std::map<std::string, double> sums;
  double updates = 0, grad_norm_sum = 0, lr_sum = 0;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    for (auto [mb, me] : row_ranges(rows, mini)) {
      std::map<std::string, double> step_sums;
      for (const auto& k : metric_keys) step_sums[k] = 0;  // the same keys on every rank, rows or not
      // Armed before the mini-batch's last backward, so the gradient sum
      // overlaps it; a rank with no rows here arms after the loop, so that
      // every rank issues the same collectives.
      std::vector<double> ride_along;
      auto start_gradient_sum = [&] {
        const LossCounts local = loss_counts(mask.slice(0, mb, me));
        ride_along = {local.count(agg_mode), local.tokens};
        for (auto& [k, v] : step_sums) ride_along.push_back(v);
        r.rl_state->sum_during_next_backward(ctx.env, ride_along);
      };
      for (auto [b, e] : row_ranges(me - mb, micro)) {
        b += mb, e += mb;
        auto lp = model::response_log_probs(r.net, rows_of(seq, b, e), temperature, /*with_entropy=*/true);
        auto m = mask.slice(0, b, e);
        auto policy = alg::policy_loss(
            old_lp.slice(0, b, e), lp.log_probs, adv.slice(0, b, e), m,
            alg::PolicyLossOptions{pl.clip_low, pl.clip_high, pl.clip_ratio_c, sum_aggregation});
        torch::Tensor loss = policy.loss;
        const double tokens = m.sum().item<double>();
        for (auto& [k, v] : policy.metrics()) step_sums[k] += k == "actor/pg_loss" ? v : v * tokens;
        auto bonus = alg::entropy_bonus(lp.entropy, m, entropy_coeff, sum_aggregation);
        if (entropy_coeff > 0) loss = loss + bonus.loss;
        step_sums["actor/entropy"] += alg::masked_mean(lp.entropy.detach(), m).item<double>() * tokens;
        if (use_kl_loss) {
          auto kl = alg::kl_loss(lp.log_probs, ref_lp.slice(0, b, e), m, kl_coef, kl_type, sum_aggregation);
          loss = loss + kl.loss;
          step_sums["actor/kl_loss"] +=
              alg::masked_mean(alg::kl_penalty(lp.log_probs.detach(), ref_lp.slice(0, b, e), m, kl_type), m)
                  .item<double>() *
              tokens;
        }
        if (e == me) start_gradient_sum();
        loss.backward();
      }
      if (ride_along.empty()) start_gradient_sum();
      auto [grad_norm, lr] = r.rl_state->step(ctx.env, &ride_along, /*divide_by_first=*/true);
      const double count = std::max(1.0, ride_along[0]), tokens = std::max(1.0, ride_along[1]);
      size_t j = 2;
      for (auto& [k, v] : step_sums) sums[k] += ride_along[j++] / (k == "actor/pg_loss" ? count : tokens);
      grad_norm_sum += grad_norm, lr_sum += lr;
      ++updates;
    }
  }
  nlohmann::json metrics = nlohmann::json::object();
  if (updates > 0) {
    for (auto& [k, v] : sums) metrics[k] = v / updates;
    metrics["actor/grad_norm"] = grad_norm_sum / updates;
    metrics["actor/lr"] = lr_sum / updates;
  }
  if (use_kl_loss) metrics["actor/kl_coef"] = kl_coef;
  Batch out;
  out.meta()["metrics"] = metrics;
  return out;
}

Batch sft_update(PolicyRole& r, const Batch& in, CallContext& ctx) {
  if (!r.sft_state) {
    r.sft_state = r.make_train_state(r.options.warm_start_optim());
  }
  r.net->train();
  torch::Tensor response_mask;
  auto seq = r.text_sequences(in.objects("prompts"), in.objects("answers"), response_mask);
  const int64_t rows = response_mask.size(0);
  auto maskf = without_padding_rows(in, response_mask.to(r.device, torch::kFloat32));
  double count = all_reduce_sum(ctx.env, maskf.sum().item<double>());
  double loss_sum = 0, correct = 0;
  bool summing = false;  // the gradient sum overlaps the last backward
  for (auto [b, e] : row_ranges(rows, r.options.micro_batch_size)) {
    auto lp = model::response_log_probs(r.net, rows_of(seq, b, e));
    auto m = maskf.slice(0, b, e);
    auto loss = -(lp.log_probs * m).sum() / std::max(count, 1.0);
    if (e == rows) {
      r.sft_state->sum_during_next_backward(ctx.env);
      summing = true;
    }
    loss.backward();
    loss_sum += loss.item<double>();
    // A token counts as right when the model gives it more than half the mass.
    correct += ((lp.log_probs.detach() > std::log(0.5)).to(torch::kFloat32) * m).sum().item<double>();
  }
  if (!summing) r.sft_state->sum_during_next_backward(ctx.env);  // no rows: the same collectives
  auto [grad_norm, lr] = r.sft_state->step(ctx.env);
  Batch out;
  out.meta()["metrics"] = {{"sft/loss", all_reduce_sum(ctx.env, loss_sum)},
                           {"sft/token_acc", all_reduce_sum(ctx.env, correct) / std::max(count, 1.0)},
                           {"sft/grad_norm", grad_norm},
                           {"sft/lr", lr}};
  return out;
}

Batch save(PolicyRole& r, const Batch&, CallContext& ctx) {
  r.save(checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

Batch load(PolicyRole& r, const Batch&, CallContext& ctx) {
  r.engine.reset();  // it holds the old network's parameters
  r.load(checkpoint_dir_arg(ctx), model::Head::kLanguageModel, ctx.env);
  r.make_engine(ctx.env);
  r.rl_state.reset();  // fresh optimizer state for the new weights
  r.sft_state.reset();
  return Batch{};
}

std::vector<TrainStateSlot> train_states(PolicyRole& r) {
  // The RL optimizer last: its buffers then hold the parameters, as in a run
  // whose warm start came before its RL steps.
  return {{"sft", &r.sft_state, r.options.warm_start_optim()}, {"rl", &r.rl_state, r.options.optim}};
}

Batch save_state(PolicyRole& r, const Batch&, CallContext& ctx) {
  save_role_state(r, train_states(r), checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

Batch load_state(PolicyRole& r, const Batch&, CallContext& ctx) {
  load_role_state(r, train_states(r), checkpoint_dir_arg(ctx), ctx.env);
  return Batch{};
}

// The actor sends, a rollout model receives; the metrics are the
// receiver's (every receiving rank gets the same bytes).
Batch stream_weights(PolicyRole& r, CallContext& ctx, bool sender) {
  const auto stats = r.link.stream(r.net, ctx.env, ctx.args, sender);
  Batch out;
  if (!sender)
    out.meta()["metrics"] = {
        {"weight_stream/received_mib", static_cast<double>(stats.bytes_received) / (1 << 20)},
        {"weight_stream/tensors", static_cast<double>(stats.tensors)},
        {"weight_stream/buckets", static_cast<double>(stats.buckets)}};
  return out;
}

// The ports of each method (registered with it).
core::CallPorts generate_ports() {
  using core::out_port;
  return core::call_ports(
      {core::required_port("prompts", "one prompt text per row")},
      {out_port("responses", "[B,R] sampled tokens"), out_port("response_mask", "[B,R] 1 on response tokens"),
       out_port("response_text", "the decoded responses"),
       out_port("old_log_probs", "[B,R] the sampling policy's log-probs"),
       out_port("prompt_ids", "[B,P] prompt tokens, left-padded"), out_port("prompt_mask", "[B,P]")});
}

core::CallPorts log_prob_ports(const std::string& out) {
  return core::call_ports(sequence_ports(), {core::out_port(out, "[B,R] log-probs of the response tokens")});
}

core::CallPorts update_ports() {
  auto in = sequence_ports();
  in.push_back(core::required_port("old_log_probs", "[B,R] log-probs at sampling"));
  in.push_back(core::required_port("advantages", "[B,R]"));
  in.push_back(core::optional_port("ref_log_probs", "[B,R] the reference's log-probs (ppo.use_kl_loss)"));
  return core::call_ports(std::move(in), {});
}

core::CallPorts sft_ports() {
  return core::call_ports({core::required_port("prompts", "one prompt text per row"),
                           core::required_port("answers", "the target text per row")},
                          {});
}

}  // namespace

void register_policy_roles(RoleRegistry& registry) {
  using P = PolicyRole;
  const core::CallPorts none = core::call_ports({}, {});
  RoleSpec actor;
  actor.name = "actor";
  actor.description = "causal LM that generates rollouts and trains with PPO-style policy losses";
  actor.create = create_policy("actor");
  actor.methods = {
      keeping_rows(method<P>("generate", DispatchMode::split_generation_mesh, generate_ports(), generate)),
      keeping_rows(
          method<P>("log_prob", DispatchMode::split_dp_mesh, log_prob_ports("old_log_probs"),
                    [](P& r, const Batch& in, CallContext&) { return log_prob(r, in, "old_log_probs"); })),
      method<P>("update", DispatchMode::split_dp_mesh, update_ports(), update),
      method<P>("sft_update", DispatchMode::split_dp_mesh, sft_ports(), sft_update),
      method<P>("save_checkpoint", DispatchMode::broadcast, none, save),
      method<P>("load_checkpoint", DispatchMode::broadcast, none, load),
      method<P>("save_state", DispatchMode::broadcast, none, save_state),
      method<P>("load_state", DispatchMode::broadcast, none, load_state),
      method<P>("stream_weights", DispatchMode::broadcast, none,
                [](P& r, const Batch&, CallContext& ctx) { return stream_weights(r, ctx, /*sender=*/true); }),
  };
  registry.add(actor);

  RoleSpec reference;
  reference.name = "reference";
  reference.description = "frozen causal LM: log-probs of the reference policy";
  reference.create = create_policy("reference");
  reference.methods = {
      keeping_rows(
          method<P>("log_prob", DispatchMode::split_dp_mesh, log_prob_ports("ref_log_probs"),
                    [](P& r, const Batch& in, CallContext&) { return log_prob(r, in, "ref_log_probs"); })),
      keeping_rows(method<P>("generate", DispatchMode::split_generation_mesh, generate_ports(), generate)),
      method<P>("save_checkpoint", DispatchMode::broadcast, none, save),
      method<P>("load_checkpoint", DispatchMode::broadcast, none, load),
      method<P>("save_state", DispatchMode::broadcast, none, save_state),
      method<P>("load_state", DispatchMode::broadcast, none, load_state),
  };
  registry.add(reference);

  RoleSpec rollout;
  rollout.name = "rollout";
  rollout.description =
      "causal LM that generates on a pool of its own with an actor's weights, streamed to "
      "it after every RL step (config.weight_stream)";
  rollout.create = create_policy("rollout");
  rollout.methods = {
      keeping_rows(method<P>("generate", DispatchMode::split_generation_mesh, generate_ports(), generate)),
      keeping_rows(
          method<P>("log_prob", DispatchMode::split_dp_mesh, log_prob_ports("old_log_probs"),
                    [](P& r, const Batch& in, CallContext&) { return log_prob(r, in, "old_log_probs"); })),
      method<P>(
          "stream_weights", DispatchMode::broadcast, none,
          [](P& r, const Batch&, CallContext& ctx) { return stream_weights(r, ctx, /*sender=*/false); }),
      method<P>("save_state", DispatchMode::broadcast, none, save_state),
      method<P>("load_state", DispatchMode::broadcast, none, load_state),
  };
  registry.add(rollout);
}

}  // namespace rlwb::workers::roles
