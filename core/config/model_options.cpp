#include "core/config/model_options.h"

#include <cmath>

namespace rlwb::core::config {

using nlohmann::json;
namespace alg = algorithms;

const EnumNames<Architecture>& architecture_names() {
  static const EnumNames<Architecture> names = {{"llama", Architecture::kLlama},
                                                {"qwen2", Architecture::kQwen2}};
  return names;
}

double OptimOptions::lr_at(int64_t step) const {
  if (warmup_steps > 0 && step < warmup_steps) return lr * static_cast<double>(step + 1) / warmup_steps;
  if (total_steps <= warmup_steps) return lr;
  double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / (total_steps - warmup_steps));
  double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return lr * (min_lr_ratio + (1.0 - min_lr_ratio) * cosine);
}

ModelSections model_sections_of(const std::string& role) {
  if (role == "actor")
    return {.known = true, .network = true, .optim = true, .sft = true, .rollout = true, .actor_ppo = true};
  if (role == "reference") return {.known = true, .network = true, .rollout = true};
  // Generates on a pool of its own with weights streamed from an actor.
  if (role == "rollout") return {.known = true, .network = true, .rollout = true, .weight_stream = true};
  if (role == "critic") return {.known = true, .network = true, .optim = true, .critic_ppo = true};
  // A reward or cost model that learns from preference pairs (update) has an optimizer.
  if (role == "reward_model" || role == "cost_model") return {.known = true, .network = true, .optim = true};
  if (role == "demo") return {.known = true, .demo = true};
  return {};
}

namespace {

void read_shape(Section&& s, ModelShapeOptions& m) {
  s.choice("architecture", m.architecture, architecture_names(), "the layer layout (qwen2 adds q/k/v biases)")
      .integer("vocab_size", m.vocab_size, "vocabulary size; default: the tokenizer's", above(0))
      .integer("hidden_size", m.hidden_size, "width of the residual stream", above(0))
      .integer("intermediate_size", m.intermediate_size, "width of the MLP; default 4 x hidden_size",
               above(0))
      .integer("num_layers", m.num_layers, "transformer blocks", above(0))
      .integer("num_heads", m.num_heads, "attention heads; must divide hidden_size", above(0))
      .integer("num_kv_heads", m.num_kv_heads,
               "key/value heads (GQA); must divide num_heads; default num_heads", above(0))
      .integer("max_position_embeddings", m.max_position_embeddings, "longest prompt + response, in tokens",
               above(0))
      .flag("tie_word_embeddings", m.tie_word_embeddings, "the LM head shares the embedding matrix")
      .number("rope_theta", m.rope_theta, "rotary embedding base", above(0));
  if (m.hidden_size % m.num_heads != 0)
    s.fail("num_heads",
           "hidden_size " + std::to_string(m.hidden_size) + " does not divide by num_heads " +
               std::to_string(m.num_heads),
           "pick num_heads that divides hidden_size, e.g. " + std::to_string(m.hidden_size / 16 > 0 ? 4 : 1));
  else if ((m.hidden_size / m.num_heads) % 2 != 0)
    s.fail("num_heads",
           "the head size hidden_size/num_heads = " + std::to_string(m.hidden_size / m.num_heads) +
               " is odd; rotary embeddings need it even",
           "change hidden_size or num_heads");
  if (m.num_heads % m.resolved_kv_heads() != 0)
    s.fail("num_kv_heads",
           "num_heads " + std::to_string(m.num_heads) + " does not divide by num_kv_heads " +
               std::to_string(m.resolved_kv_heads()),
           "num_kv_heads must divide num_heads (grouped-query attention)");
}

}  // namespace

void read_tokenizer(Section& s, TokenizerOptions& t) {
  const json* v =
      s.raw("tokenizer", "char | {type: char, alphabet: text} | path",
            "'char' (one token per character), a char tokenizer with its own alphabet, or the path of "
            "a Hugging Face tokenizer.json or a SentencePiece tokenizer.model (or its directory)");
  if (!v || v->is_null()) return;
  t.as_written = *v;
  if (v->is_string()) {
    if (v->get<std::string>() == "char") return;
    t.kind = TokenizerOptions::Kind::kFile;
    t.path = v->get<std::string>();
    if (t.path.empty())
      s.fail("tokenizer", "is empty", "write 'char' or the path of a tokenizer.json or tokenizer.model");
    return;
  }
  if (v->is_object()) {
    Section map(v, s.path("tokenizer"), s.context());
    std::string type = "char";
    std::string alphabet;
    map.text("type", type, "tokenizer kind; only 'char' is a map")
        .text("alphabet", alphabet, "the characters, each one token");
    if (type != "char")
      map.fail("type", "'" + type + "' is not a tokenizer type",
               "write type: char, or give the path of a tokenizer.json or tokenizer.model as the value of "
               "'tokenizer'");
    if (v->contains("alphabet")) t.alphabet = alphabet;
    return;
  }
  s.fail(
      "tokenizer", show_value(*v) + " is not a tokenizer",
      "write 'char', {type: char, alphabet: \"...\"} or the path of a tokenizer.json or tokenizer.model (or "
      "its directory)");
}

namespace {

void read_optim(Section&& s, OptimOptions& o) {
  s.number("lr", o.lr, "peak learning rate", above(0))
      .number("weight_decay", o.weight_decay, "AdamW's decoupled weight decay", at_least(0))
      .numbers("betas", o.betas, "AdamW's beta1, beta2", 2)
      .number("eps", o.eps, "AdamW's epsilon", above(0))
      .integer("warmup_steps", o.warmup_steps, "optimizer steps of linear warmup", at_least(0))
      .integer("total_steps", o.total_steps, "steps of the cosine schedule; 0: constant after warmup",
               at_least(0))
      .number("min_lr_ratio", o.min_lr_ratio, "the cosine's floor as a fraction of lr", between(0, 1))
      .number("grad_clip", o.grad_clip, "global gradient norm clip; <= 0: none");
  for (double b : o.betas)
    if (!(b >= 0 && b < 1)) s.fail("betas", "each beta must be in [0, 1)", "write e.g. [0.9, 0.999]");
}

void read_ppo(Section&& s, PpoOptions& p, const ModelSections& sections) {
  s.integer("epochs", p.epochs, "passes over each batch", above(0))
      .integer("mini_batch_size", p.mini_batch_size,
               "global rows per optimizer step (over all data-parallel ranks); 0: the whole batch",
               at_least(0))
      .choice("loss_agg_mode", p.loss_agg_mode, alg::loss_agg_mode_names(),
              "how token losses become one loss");
  if (sections.actor_ppo) {
    s.number("clip_ratio", p.clip_ratio, "PPO's clip range epsilon", above(0))
        .number("clip_ratio_low", p.clip_ratio_low, "lower clip; default clip_ratio", above(0))
        .number("clip_ratio_high", p.clip_ratio_high, "upper clip (DAPO's clip-higher); default clip_ratio",
                above(0))
        .number("clip_ratio_c", p.clip_ratio_c, "dual-clip bound for negative advantages; null: off",
                above(1))
        .number("entropy_coeff", p.entropy_coeff, "weight of the entropy bonus", at_least(0))
        .flag("use_kl_loss", p.use_kl_loss, "add the KL to the reference as a loss term (GRPO)")
        .number("kl_loss_coef", p.kl_loss_coef, "weight of the KL loss", at_least(0))
        .choice("kl_loss_type", p.kl_loss_type, alg::kl_estimator_names(), "KL estimator of the loss term");
  }
  if (sections.critic_ppo)
    s.number("cliprange_value", p.cliprange_value, "value clip range; null: no clipping", above(0));
}

// The network: a fresh model's shape or a checkpoint, the tokenizer, the
// seed and the micro-batch (every role with weights reads these).
void read_network(Section& s, const ParseContext& ctx, ModelOptions& o) {
  {
    ModelShapeOptions shape;
    read_shape(s.child("model", "the shape of a fresh model"), shape);
    if (s.has("model")) o.model = shape;
  }
  s.text("checkpoint", o.checkpoint, "an HF-layout checkpoint directory to start from (instead of model)");
  if (o.model && !o.checkpoint.empty())
    s.fail("checkpoint", "both 'model' and 'checkpoint' are set", "keep one: a fresh model or a checkpoint");
  if (!o.model && o.checkpoint.empty() && !ctx.doc())
    s.fail("", "needs 'model: {...}' (a fresh model of that shape) or 'checkpoint: DIR'",
           "add e.g. model: {hidden_size: 64, num_layers: 2, num_heads: 4}");
  read_tokenizer(s, o.tokenizer);
  s.integer("seed", o.seed, "seed of the initial weights (every rank starts from rank 0's)")
      .integer("micro_batch_size", o.micro_batch_size, "rows per forward/backward pass on one rank", above(0))
      .integer("pipeline_micro_batches", o.pipeline_micro_batches,
               "with pipeline stages (pp > 1): a pass's rows run through the stages in this many parts, "
               "the stages working on different parts at once; 1: one part, one stage at a time",
               above(0));
}

}  // namespace

ModelOptions parse_model_options(const std::string& role, const json& config, const std::string& path,
                                 ParseContext& ctx) {
  ModelOptions o;
  const ModelSections sections = model_sections_of(role);
  if (!sections.known) return o;  // the validator reports the role
  Section s(&config, path, ctx);
  if (sections.demo)
    s.integer("sleep_ms", o.demo.sleep_ms, "each call sleeps this long", at_least(0))
        .number("factor", o.demo.factor, "scale of the demo computation")
        .integer("fail_from_step", o.demo.fail_from_step, "the fail method fails from this step on");
  if (sections.network) read_network(s, ctx, o);
  if (sections.optim) read_optim(s.child("optim", "the RL optimizer"), o.optim);
  if (sections.sft) {
    Section sft = s.child("sft", "the warm start (supervised steps before RL)");
    OptimOptions warm;
    read_optim(sft.child("optim", "the warm start's optimizer; default: optim"), warm);
    if (sft.has("optim")) o.sft_optim = warm;
  }
  if (sections.rollout) {
    Section r = s.child("rollout", "sampling of responses");
    r.number("temperature", o.rollout.temperature, "softmax temperature of sampling and of log-probs",
             above(0))
        .integer("top_k", o.rollout.top_k, "sample among the k likeliest tokens; 0: off", at_least(0))
        .number("top_p", o.rollout.top_p, "nucleus sampling mass; 1: off", Range{0.0, 1.0, true})
        .integer("max_new_tokens", o.rollout.max_new_tokens, "longest response, in tokens", above(0));
  }
  if (sections.actor_ppo || sections.critic_ppo)
    read_ppo(s.child("ppo", "the PPO-style update"), o.ppo, sections);
  if (sections.weight_stream) {
    WeightStreamSource w;
    s.child("weight_stream", "role rollout: the actor whose weights this model receives after every RL step")
        .text("from", w.from, "the model (role actor, on another pool) the weights come from")
        .integer("bucket_mb", w.bucket_mb, "MiB per broadcast", above(0))
        .flag("only_changed", w.only_changed,
              "send only the tensors an update has moved since the last stream");
    if (w.from.empty())
      s.fail("weight_stream", "a rollout model needs the actor its weights come from",
             "write weight_stream: {from: actor} (the actor's model name)");
    o.weight_stream = w;
  }
  return o;
}

ModelOptions parse_model_options(const std::string& role, const json& config, const std::string& path) {
  ParseContext ctx;
  ModelOptions o = parse_model_options(role, config, path, ctx);
  ctx.throw_if_any();
  return o;
}

}  // namespace rlwb::core::config
