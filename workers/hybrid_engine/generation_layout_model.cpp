#include "workers/hybrid_engine/generation_layout_model.h"

#include <torch/torch.h>

#include "workers/model/layers.h"
#include "workers/model/linear.h"
#include "workers/model/model_error.h"
#include "workers/model/vocab_parallel.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::hybrid_engine {

using model::ModelError;

struct GenerationLayoutModel::Step {
  torch::Tensor cos, sin;  // [B, 1, T, D]
  torch::Tensor mask;      // [B, 1, T, S] bool, or undefined (then `causal`)
  bool causal = true;
  model::KVCache* cache = nullptr;
};

GenerationLayoutModel::GenerationLayoutModel(const model::TransformerConfig& config,
                                             GenerationWeights weights, const model::TensorParallel& tp,
                                             const model::PipelineParallel& pp)
    : config_(config),
      shard_config_(config),
      weights_(std::move(weights)),
      tp_(tp),
      pp_(pp),
      vocab_parallel_(pp.active() ? pp.vocab : tp) {
  for (auto [setting, value] : {std::pair<const char*, int64_t>{"num_heads", config.num_heads},
                                {"num_kv_heads", config.num_kv_heads},
                                {"intermediate_size", config.intermediate_size}}) {
    if (value % tp.size != 0)
      throw ModelError("GenerationLayoutModel: generation tp = " + std::to_string(tp.size) +
                       " must divide '" + setting + "' = " + std::to_string(value) +
                       "; choose a generation tp that divides it");
  }
  if (pp.active() && pp.vocab.size != pp.stages * tp.size)
    throw ModelError("GenerationLayoutModel: with " + std::to_string(pp.stages) +
                     " generation stages the vocabulary is split over the replica's " +
                     std::to_string(pp.stages * tp.size) + " ranks, but PipelineParallel::vocab has " +
                     std::to_string(pp.vocab.size));
  if (config.vocab_size % vocab_parallel_.size != 0)
    throw ModelError("GenerationLayoutModel: 'vocab_size' = " + std::to_string(config.vocab_size) +
                     " does not divide by the " + std::to_string(vocab_parallel_.size) +
                     " ranks it is split over (generation pp * tp); pad the vocabulary");
  const model::Shard stage_layers = model::layers_of_stage(config.num_layers, pp.stage, pp.stages);
  if (static_cast<int64_t>(weights_.layers.size()) != stage_layers.size ||
      weights_.first_layer != stage_layers.start)
    throw ModelError(
        "GenerationLayoutModel: weights of layers [" + std::to_string(weights_.first_layer) + ", " +
        std::to_string(weights_.first_layer + static_cast<int64_t>(weights_.layers.size())) +
        ") for generation stage " + std::to_string(pp.stage) + " of " + std::to_string(pp.stages) +
        ", which holds layers [" + std::to_string(stage_layers.start) + ", " +
        std::to_string(stage_layers.start + stage_layers.size) +
        ") of 'num_layers' = " + std::to_string(config.num_layers));
  vocab_ = model::shard_of(config.vocab_size, vocab_parallel_.rank, vocab_parallel_.size);
  shard_config_.head_dim = config.resolved_head_dim();
  shard_config_.num_heads = config.num_heads / tp.size;
  shard_config_.num_kv_heads = config.num_kv_heads / tp.size;
  shard_config_.intermediate_size = config.intermediate_size / tp.size;
  shard_config_.vocab_size = vocab_.size;
  model::RopeTables rope = model::rope_tables(config, config.max_position_embeddings);
  rope_cos_ = rope.cos.to(weights_.norm.device());
  rope_sin_ = rope.sin.to(weights_.norm.device());
}

// Vocab-parallel lookup (as the Transformer's): each rank looks up the ids
// it holds, zero for the others, summed over the generation ranks.
torch::Tensor GenerationLayoutModel::embed(const torch::Tensor& input_ids) {
  if (!vocab_parallel_.active()) return torch::embedding(weights_.tok_embeddings, input_ids);
  return model::reduce_from_tensor_parallel(
      model::held_embedding_rows(weights_.tok_embeddings, input_ids, vocab_), vocab_parallel_);
}

// x [..., d_g * k] times d_g column blocks [d_g, out, k]: the partial sum
// of this rank's columns, then the sum over the generation ranks and the
// (replicated) bias once.
torch::Tensor GenerationLayoutModel::row_parallel(const torch::Tensor& x, const torch::Tensor& blocks,
                                                  const torch::Tensor& bias) {
  const int64_t parts = blocks.size(0), width = blocks.size(2), out = blocks.size(1);
  std::vector<int64_t> shape = x.sizes().vec();
  const int64_t rows = x.numel() / x.size(-1);
  torch::Tensor by_block = x.reshape({rows, parts, width}).transpose(0, 1);  // [d_g, rows, k]
  torch::Tensor partial = parts == 1 ? torch::mm(by_block[0], blocks[0].t())
                                     : torch::bmm(by_block, blocks.transpose(1, 2)).sum(0);
  torch::Tensor sum = model::reduce_from_tensor_parallel(partial, tp_);
  if (bias.defined()) sum = sum + bias;
  shape.back() = out;
  return sum.view(shape);
}

torch::Tensor GenerationLayoutModel::layer(int64_t local, const torch::Tensor& x, const Step& step) {
  const GenerationLayerWeights& w = weights_.layers[local];
  const int64_t index = weights_.first_layer + local;  // the cache keys layers by the model's index
  const int64_t batch = x.size(0), len = x.size(1), dim = shard_config_.head_dim;
  const int64_t heads = shard_config_.num_heads, kv_heads = shard_config_.num_kv_heads;
  torch::Tensor normed = model::rms_norm(x, w.attn_norm, config_.rms_norm_eps);
  auto project = [&](const torch::Tensor& weight, const torch::Tensor& bias, int64_t n) {
    return model::linear(normed, weight, bias).view({batch, len, n, dim}).transpose(1, 2);
  };
  torch::Tensor q = model::apply_rope(project(w.wq, w.wq_bias, heads), step.cos, step.sin);
  torch::Tensor k = model::apply_rope(project(w.wk, w.wk_bias, kv_heads), step.cos, step.sin);
  torch::Tensor v = project(w.wv, w.wv_bias, kv_heads);
  if (step.cache != nullptr) std::tie(k, v) = step.cache->append(index, k, v);
  torch::Tensor attended = model::grouped_query_attention(q, k, v, step.mask, step.causal)
                               .transpose(1, 2)
                               .reshape({batch, len, heads * dim});
  torch::Tensor h = x + row_parallel(attended, w.wo_blocks, w.wo_bias);
  torch::Tensor ffn_in = model::rms_norm(h, w.ffn_norm, config_.rms_norm_eps);
  torch::Tensor inner = model::swiglu(model::linear(ffn_in, w.ffn_gate, w.ffn_gate_bias),
                                      model::linear(ffn_in, w.ffn_up, w.ffn_up_bias));
  return h + row_parallel(inner, w.ffn_down_blocks, w.ffn_down_bias);
}

torch::Tensor GenerationLayoutModel::hidden_states(const torch::Tensor& input_ids,
                                                   const torch::Tensor& position_ids,
                                                   const torch::Tensor& key_mask, model::KVCache* cache) {
  const int64_t batch = input_ids.size(0), len = input_ids.size(1), dim = shard_config_.head_dim;
  const int64_t past = cache != nullptr ? cache->length() : 0;
  if (past + len > config_.max_position_embeddings)
    throw ModelError("GenerationLayoutModel: " + std::to_string(past + len) +
                     " positions exceed the context (setting 'max_position_embeddings' = " +
                     std::to_string(config_.max_position_embeddings) + ")");
  Step step;
  torch::Tensor flat_positions = position_ids.reshape({-1});
  step.cos = rope_cos_.index_select(0, flat_positions).view({batch, 1, len, dim});
  step.sin = rope_sin_.index_select(0, flat_positions).view({batch, 1, len, dim});
  step.cache = cache;
  const bool padded = key_mask.defined() && !key_mask.all().item<bool>();
  if (padded || (past > 0 && len > 1)) {
    step.mask = model::causal_padding_mask(
        key_mask.defined() ? key_mask : torch::ones({batch, past + len}, input_ids.options()), len);
  } else {
    step.causal = len > 1;  // one new query sees every cached key
  }
  torch::Tensor x = embed(input_ids);
  const int64_t held = static_cast<int64_t>(weights_.layers.size());
  for (int stage = 0; stage < pp_.stages; ++stage) {  // one stage without pipeline parallelism
    if (stage == pp_.stage)
      for (int64_t i = 0; i < held; ++i) x = layer(i, x, step);
    x = model::pass_stage_output(x, stage, {batch, len, config_.hidden_size}, pp_,
                                 /*replicated_after=*/stage + 1 == pp_.stages);
  }
  if (pp_.active()) pp_.group->wait_background_sends();  // received: the last stage ran
  if (cache != nullptr) cache->advance(len);
  return model::rms_norm(x, weights_.norm, config_.rms_norm_eps);
}

torch::Tensor GenerationLayoutModel::logits(const torch::Tensor& hidden) {
  return model::linear(hidden, weights_.lm_head, torch::Tensor());
}

torch::Tensor GenerationLayoutModel::forward(const torch::Tensor& input_ids,
                                             const torch::Tensor& attention_mask) {
  const torch::Device device = weights_.norm.device();
  const torch::Tensor ids = input_ids.to(device);
  const torch::Tensor mask = attention_mask.defined() ? attention_mask.to(device) : torch::ones_like(ids);
  return logits(hidden_states(ids, model::position_ids_from_mask(mask), mask));
}

namespace {

at::Generator seeded_generator(const torch::Device& device, uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

}  // namespace

model::GenerationResult GenerationLayoutModel::generate(const torch::Tensor& prompt_ids,
                                                        const torch::Tensor& prompt_mask,
                                                        const model::GenerationOptions& options) {
  model::validate(options.sampling);
  const int64_t batch = prompt_ids.size(0), prompt_len = prompt_ids.size(1), max_new = options.max_new_tokens;
  if (prompt_ids.dim() != 2 || prompt_mask.sizes() != prompt_ids.sizes() || max_new <= 0)
    throw ModelError(
        "GenerationLayoutModel::generate: prompt ids and mask must both be [batch, length] and "
        "'max_new_tokens' positive");
  c10::InferenceMode inference;
  int64_t pad = options.pad_token_id;
  for (int64_t fallback : {config_.pad_token_id, config_.eos_token_id, int64_t{0}})
    if (pad < 0) pad = fallback;
  std::vector<int64_t> stops = options.stop_token_ids;
  if (stops.empty() && config_.eos_token_id >= 0) stops.push_back(config_.eos_token_id);
  // Everything on the weights' device (the prompts come from the host).
  const torch::Device device = weights_.norm.device();
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const torch::Tensor stop_ids = torch::tensor(stops, torch::kInt64).to(device);
  // As generate(): the tp ranks sample alike from `shared`, each adding the
  // noise of its own vocabulary columns from `own`.
  at::Generator shared = seeded_generator(device, options.seed);
  at::Generator own =
      seeded_generator(device, options.seed * 1000003 + uint64_t{7919} * (vocab_parallel_.rank + 1));

  model::GenerationResult result;
  result.responses = torch::full({batch, max_new}, pad, i64);
  result.response_mask = torch::zeros({batch, max_new}, i64);
  result.log_probs = torch::zeros({batch, max_new}, i64.dtype(torch::kFloat32));
  torch::Tensor key_mask = torch::zeros({batch, prompt_len + max_new}, i64);
  key_mask.narrow(1, 0, prompt_len).copy_(prompt_mask);
  model::KVCache cache(shard_config_, batch, prompt_len + max_new, weights_.norm.options());
  torch::Tensor positions = model::position_ids_from_mask(prompt_mask.to(device));
  torch::Tensor next_position = positions.select(1, prompt_len - 1) + 1;
  torch::Tensor hidden =
      hidden_states(prompt_ids.to(device), positions, key_mask.narrow(1, 0, prompt_len), &cache);
  torch::Tensor local_logits = logits(hidden.select(1, prompt_len - 1));
  torch::Tensor finished = torch::zeros({batch}, i64.dtype(torch::kBool));
  for (int64_t step = 0; step < max_new; ++step) {
    model::NextTokens next = model::sample_vocab_parallel(local_logits, vocab_, config_.vocab_size,
                                                          vocab_parallel_, options.sampling, shared, own);
    torch::Tensor tokens = next.tokens.masked_fill(finished, pad);
    result.responses.select(1, step).copy_(tokens);
    result.log_probs.select(1, step).copy_(next.log_probs.masked_fill(finished, 0.0));
    result.response_mask.select(1, step).copy_(finished.logical_not());
    if (step + 1 == max_new) break;
    if (stop_ids.numel() > 0) finished = finished.logical_or(torch::isin(tokens, stop_ids));
    if (finished.all().item<bool>()) break;
    key_mask.select(1, prompt_len + step).fill_(1);
    hidden = hidden_states(tokens.view({-1, 1}), next_position.view({-1, 1}),
                           key_mask.narrow(1, 0, prompt_len + step + 1), &cache);
    local_logits = logits(hidden.select(1, 0));
    next_position.add_(1);
  }
  result.response_lengths = result.response_mask.sum(1);
  return result;
}

}  // namespace rlwb::workers::hybrid_engine
