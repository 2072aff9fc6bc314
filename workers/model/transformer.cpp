#include "workers/model/transformer.h"

#include <torch/torch.h>

#include "workers/model/layers.h"
#include "workers/model/model_error.h"
#include "workers/model/vocab_parallel.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

// Positions [from, T) of x [B, T, ...]: x itself when that is all of it,
// so that autograd records no slice (its backward would allocate and
// zero-fill a gradient the size of x, then copy into it).
torch::Tensor positions_from(const torch::Tensor& x, int64_t from) {
  return from == 0 ? x : x.narrow(1, from, x.size(1) - from);
}

torch::nn::Linear make_linear(int64_t in, int64_t out, bool bias, double std) {
  torch::nn::Linear linear(torch::nn::LinearOptions(in, out).bias(bias));
  torch::NoGradGuard no_grad;
  linear->weight.normal_(0.0, std);
  if (bias) linear->bias.zero_();
  return linear;
}

}  // namespace

RMSNormImpl::RMSNormImpl(int64_t dim, double eps) : eps(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) { return rms_norm(x, weight, eps); }

TransformerBlockImpl::TransformerBlockImpl(const TransformerConfig& c, int64_t layer_index)
    : layer_index_(layer_index),
      num_heads_(c.num_heads),
      num_kv_heads_(c.num_kv_heads),
      head_dim_(c.resolved_head_dim()) {
  const int64_t d = c.hidden_size;
  const double std = c.initializer_range;
  attn_norm = register_module("attn_norm", RMSNorm(d, c.rms_norm_eps));
  wq = register_module("wq", make_linear(d, num_heads_ * head_dim_, c.qkv_bias, std));
  wk = register_module("wk", make_linear(d, num_kv_heads_ * head_dim_, c.qkv_bias, std));
  wv = register_module("wv", make_linear(d, num_kv_heads_ * head_dim_, c.qkv_bias, std));
  wo = register_module("wo", make_linear(num_heads_ * head_dim_, d, c.output_bias, std));
  ffn_norm = register_module("ffn_norm", RMSNorm(d, c.rms_norm_eps));
  ffn_gate = register_module("ffn_gate", make_linear(d, c.intermediate_size, c.mlp_bias, std));
  ffn_up = register_module("ffn_up", make_linear(d, c.intermediate_size, c.mlp_bias, std));
  ffn_down = register_module("ffn_down", make_linear(c.intermediate_size, d, c.mlp_bias, std));
}

torch::Tensor TransformerBlockImpl::forward(const torch::Tensor& x, const BlockInputs& in,
                                            int64_t outputs_from) {
  torch::Tensor h = positions_from(x, outputs_from) + attention(attn_norm(x), in, outputs_from);
  return h + feed_forward(ffn_norm(h));
}

void TransformerBlockImpl::use_tensor_parallel(const TensorParallel& tp) {
  tp_ = tp;
  num_heads_ /= tp.size;
  num_kv_heads_ /= tp.size;
}

torch::Tensor TransformerBlockImpl::row_parallel_sum(const torch::Tensor& partial,
                                                     const torch::Tensor& bias) {
  torch::Tensor sum = reduce_from_tensor_parallel(partial, tp_);
  return bias.defined() ? sum + bias : sum;
}

torch::Tensor TransformerBlockImpl::attention(const torch::Tensor& normed, const BlockInputs& in,
                                              int64_t outputs_from) {
  const torch::Tensor x = copy_to_tensor_parallel(normed, tp_);
  const int64_t batch = x.size(0), len = x.size(1), queries = len - outputs_from;
  torch::Tensor q, k, v;  // [B, heads, T, D] (q: [B, heads, queries, D])
  if (torch::GradMode::is_enabled()) {
    q = apply_rope(linear(positions_from(x, outputs_from), wq->weight, wq->bias)
                       .view({batch, queries, num_heads_, head_dim_})
                       .transpose(1, 2),
                   in.cos.narrow(2, outputs_from, queries), in.sin.narrow(2, outputs_from, queries));
    k = apply_rope(
        linear(x, wk->weight, wk->bias).view({batch, len, num_kv_heads_, head_dim_}).transpose(1, 2), in.cos,
        in.sin);
    v = linear(x, wv->weight, wv->bias).view({batch, len, num_kv_heads_, head_dim_}).transpose(1, 2);
  } else {
    // The same, with one matmul for q, k, v and one RoPE call for q and k.
    torch::Tensor qkv = packed_qkv_(x, {wq->weight, wk->weight, wv->weight}, {wq->bias, wk->bias, wv->bias})
                            .view({batch, len, num_heads_ + 2 * num_kv_heads_, head_dim_})
                            .transpose(1, 2);
    torch::Tensor qk = apply_rope(qkv.narrow(1, 0, num_heads_ + num_kv_heads_), in.cos, in.sin);
    // Without autograd the extra queries cost less than a second matmul.
    q = qk.narrow(1, 0, num_heads_).narrow(2, outputs_from, queries);
    k = qk.narrow(1, num_heads_, num_kv_heads_);
    v = qkv.narrow(1, num_heads_ + num_kv_heads_, num_kv_heads_);
  }
  if (in.cache != nullptr) std::tie(k, v) = in.cache->append(layer_index_, k, v);
  torch::Tensor mask = in.mask;
  bool causal = in.causal;
  if (outputs_from > 0) {
    // The queries are the last `queries` of the keys: the mask's last rows.
    // A causal flag would align them with the first keys, so build a mask.
    if (!mask.defined() && causal)
      mask = causal_padding_mask(torch::ones({batch, k.size(2)}, k.options().dtype(torch::kInt64)), len);
    if (mask.defined()) mask = mask.narrow(2, outputs_from, queries);
    causal = false;
  }
  torch::Tensor out = grouped_query_attention(q, k, v, mask, causal)  // [B, H, queries, D]
                          .transpose(1, 2)
                          .reshape({batch, queries, num_heads_ * head_dim_});
  if (tp_.active()) {
    return row_parallel_sum(torch::GradMode::is_enabled() ? linear(out, wo->weight, torch::Tensor())
                                                          : packed_wo_(out, {wo->weight}, {torch::Tensor()}),
                            wo->bias);
  }
  return torch::GradMode::is_enabled() ? linear(out, wo->weight, wo->bias)
                                       : packed_wo_(out, {wo->weight}, {wo->bias});
}

torch::Tensor TransformerBlockImpl::feed_forward(const torch::Tensor& normed) {
  const torch::Tensor x = copy_to_tensor_parallel(normed, tp_);
  // Row-parallel ffn_down adds its bias once, after the sum over the tp ranks.
  const torch::Tensor down_bias = tp_.active() ? torch::Tensor() : ffn_down->bias;
  torch::Tensor down;
  if (torch::GradMode::is_enabled()) {
    torch::Tensor inner =
        swiglu(linear(x, ffn_gate->weight, ffn_gate->bias), linear(x, ffn_up->weight, ffn_up->bias));
    down = linear(inner, ffn_down->weight, down_bias);
  } else {
    torch::Tensor gate_up =
        packed_gate_up_(x, {ffn_gate->weight, ffn_up->weight}, {ffn_gate->bias, ffn_up->bias});
    const int64_t inner = gate_up.size(-1) / 2;
    torch::Tensor inner_act = swiglu(gate_up.narrow(-1, 0, inner), gate_up.narrow(-1, inner, inner));
    down = packed_down_(inner_act, {ffn_down->weight}, {down_bias});
  }
  return tp_.active() ? row_parallel_sum(down, ffn_down->bias) : down;
}

TransformerImpl::TransformerImpl(const TransformerConfig& config) : config_(config) {
  config_.validate("TransformerConfig");
  shard_config_ = config_;
  vocab_ = {0, config_.vocab_size};
  stage_layers_ = {0, config_.num_layers};
  const double std = config_.initializer_range;
  tok_embeddings = register_module("tok_embeddings", torch::nn::Embedding(torch::nn::EmbeddingOptions(
                                                         config_.vocab_size, config_.hidden_size)));
  {
    torch::NoGradGuard no_grad;
    tok_embeddings->weight.normal_(0.0, std);
  }
  layers = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    blocks_.push_back(TransformerBlock(config_, i));
    layers->push_back(blocks_.back());
  }
  norm = register_module("norm", RMSNorm(config_.hidden_size, config_.rms_norm_eps));
  if (config_.head == Head::kValue) {
    score = register_module("score", make_linear(config_.hidden_size, 1, /*bias=*/false, std));
  } else if (!config_.tie_word_embeddings) {
    lm_head = register_module("lm_head", make_linear(config_.hidden_size, config_.vocab_size, false, std));
  }
  RopeTables rope = rope_tables(config_, config_.max_position_embeddings);
  rope_cos_ = register_buffer("rope_cos", rope.cos);
  rope_sin_ = register_buffer("rope_sin", rope.sin);
}

torch::Tensor TransformerImpl::hidden_states(const torch::Tensor& input_ids,
                                             const torch::Tensor& position_ids, const torch::Tensor& key_mask,
                                             KVCache* cache, int64_t outputs_from) {
  const int64_t batch = input_ids.size(0), len = input_ids.size(1);
  if (outputs_from < 0 || outputs_from >= len) {
    throw ModelError("Transformer: outputs_from " + std::to_string(outputs_from) + " must be in [0, " +
                     std::to_string(len) + ")");
  }
  const int64_t past = cache != nullptr ? cache->length() : 0;
  const int64_t keys = past + len;
  if (key_mask.defined() && (key_mask.size(0) != batch || key_mask.size(1) != keys)) {
    throw ModelError("Transformer: key_mask is [" + std::to_string(key_mask.size(0)) + ", " +
                     std::to_string(key_mask.size(1)) + "] but the batch needs [" + std::to_string(batch) +
                     ", " + std::to_string(keys) + "]");
  }
  if (keys > config_.max_position_embeddings &&
      position_ids.max().item<int64_t>() >= config_.max_position_embeddings) {
    throw ModelError("Transformer: position " + std::to_string(position_ids.max().item<int64_t>()) +
                     " is beyond the context (setting 'max_position_embeddings' = " +
                     std::to_string(config_.max_position_embeddings) + ")");
  }
  const int64_t dim = config_.resolved_head_dim();
  BlockInputs in;
  torch::Tensor flat_positions = position_ids.reshape({-1});
  in.cos = rope_cos_.index_select(0, flat_positions).view({batch, 1, len, dim});
  in.sin = rope_sin_.index_select(0, flat_positions).view({batch, 1, len, dim});
  in.cache = cache;
  const bool padded = key_mask.defined() && !key_mask.all().item<bool>();
  if (padded || (past > 0 && len > 1)) {
    in.mask = causal_padding_mask(
        key_mask.defined() ? key_mask : torch::ones({batch, keys}, input_ids.options()), len);
  } else {
    in.causal = len > 1;  // one new query sees every cached key
  }
  torch::Tensor x = embed(input_ids);
  // Every stage's autograd graph must reach every hand-over, whose backward
  // is collective: start it from a tensor that needs a gradient even when
  // the embedding is frozen.
  if (pp_.active() && torch::GradMode::is_enabled() && !x.requires_grad())
    x = x.detach().requires_grad_(true);
  // Pipeline micro-batches (pipeline_parallel.h): the rows in runs, each
  // through the stages on its own, against its rows of a growing cache
  // (scoring rows that share a prompt); one run without stages or with a
  // generation's cache (a decoding step: one token a row).
  const bool splits = pp_.active() && (cache == nullptr || cache->growing());
  const int64_t runs = splits ? std::min<int64_t>(pp_.micro_batches, batch) : 1;
  if (runs == 1) {
    x = through_stages(x, in, outputs_from, /*micro_batch=*/0);
  } else {
    std::vector<torch::Tensor> outputs;
    std::vector<KVCache> caches;
    caches.reserve(runs);  // the runs' inputs point at them
    for (int64_t m = 0; m < runs; ++m) {
      const Shard rows = shard_of(batch, static_cast<int>(m), static_cast<int>(runs));
      BlockInputs part = rows_of(in, rows);
      if (cache != nullptr) {
        caches.push_back(cache->rows(rows.start, rows.size));
        part.cache = &caches.back();
      }
      outputs.push_back(
          through_stages(x.narrow(0, rows.start, rows.size), part, outputs_from, static_cast<int>(m)));
    }
    x = torch::cat(outputs);
    if (cache != nullptr) cache->join_rows(caches);
  }
  if (pp_.active()) {  // the last stage's output to every stage, for the whole batch at once
    x = pass_stage_output(x, pp_.stages - 1, {batch, len - outputs_from, config_.hidden_size}, pp_,
                          /*replicated_after=*/true);
    pp_.group->wait_background_sends();  // received: the last stage has run every micro-batch
  }
  if (blocks_.empty()) x = positions_from(x, outputs_from);
  if (cache != nullptr) cache->advance(len);
  return norm(x);
}

// The rows [rows.start, rows.start + rows.size) of a batch's block inputs.
BlockInputs TransformerImpl::rows_of(const BlockInputs& in, const Shard& rows) {
  BlockInputs part = in;
  part.cos = in.cos.narrow(0, rows.start, rows.size);
  part.sin = in.sin.narrow(0, rows.start, rows.size);
  if (in.mask.defined()) part.mask = in.mask.narrow(0, rows.start, rows.size);
  return part;
}

// This stage's blocks over x, handed on from stage to stage up to the
// last one (which keeps its output); `micro_batch` tags the hand-overs.
torch::Tensor TransformerImpl::through_stages(torch::Tensor x, const BlockInputs& in, int64_t outputs_from,
                                              int micro_batch) {
  const int64_t rows = x.size(0), len = x.size(1), layers = config_.num_layers;
  for (int stage = 0; stage < pp_.stages; ++stage) {  // one stage without pipeline parallelism
    const Shard run = pp_.active() ? layers_of_stage(layers, stage, pp_.stages) : stage_layers_;
    if (stage == pp_.stage)
      for (int64_t i = run.start; i < run.start + run.size; ++i)
        x = blocks_[i]->forward(x, in, i + 1 == layers ? outputs_from : 0);
    if (stage + 1 < pp_.stages)
      x = pass_stage_output(x, stage, {rows, len, config_.hidden_size}, pp_, /*replicated_after=*/false,
                            micro_batch);
  }
  return x;
}

torch::Tensor TransformerImpl::logits(const torch::Tensor& hidden) {
  if (config_.head != Head::kLanguageModel) {
    throw ModelError("Transformer: logits() needs a language-model head; this model has a value head");
  }
  const torch::Tensor& weight = lm_head ? lm_head->weight : tok_embeddings->weight;
  if (!torch::GradMode::is_enabled()) return packed_head_(hidden, {weight}, {torch::Tensor()});
  return linear(copy_to_tensor_parallel(hidden, vocab_parallel_), weight, torch::Tensor());
}

// Vocab-parallel lookup: each rank looks up the ids it holds, zero for
// the others, and the sum over the ranks is every id's row.
torch::Tensor TransformerImpl::embed(const torch::Tensor& input_ids) {
  if (!vocab_parallel_.active()) return tok_embeddings(input_ids);
  const torch::Tensor rows = held_embedding_rows(tok_embeddings->weight, input_ids, vocab_);
  return pp_.active() ? reduce_embedding_over_stages(rows, pp_) : reduce_from_tensor_parallel(rows, tp_);
}

void TransformerImpl::shard_tensor_parallel(const TensorParallel& tp) {
  if (!tp.active()) return;
  if (tp_.active()) throw ModelError("Transformer: shard_tensor_parallel called twice");
  for (auto [setting, value] : {std::pair<const char*, int64_t>{"num_heads", config_.num_heads},
                                {"num_kv_heads", config_.num_kv_heads},
                                {"intermediate_size", config_.intermediate_size}}) {
    if (value % tp.size != 0)
      throw ModelError("Transformer: tensor parallelism tp = " + std::to_string(tp.size) + " must divide '" +
                       setting + "' = " + std::to_string(value) + "; choose a tp that divides it");
  }
  torch::NoGradGuard no_grad;
  for (auto& item : named_parameters()) {
    const int64_t dim = tensor_parallel_dim(item.key());
    if (dim < 0) continue;
    torch::Tensor& p = item.value();
    const Shard part = shard_of(p.size(dim), tp.rank, tp.size);
    p.set_data(p.detach().narrow(dim, part.start, part.size).clone());
  }
  for (auto& block : blocks_) block->use_tensor_parallel(tp);
  tp_ = tp;
  vocab_parallel_ = tp;
  vocab_ = shard_of(config_.vocab_size, tp.rank, tp.size);
  shard_config_.head_dim = config_.resolved_head_dim();
  shard_config_.num_heads = config_.num_heads / tp.size;
  shard_config_.num_kv_heads = config_.num_kv_heads / tp.size;
  shard_config_.intermediate_size = config_.intermediate_size / tp.size;
  shard_config_.vocab_size = vocab_.size;
}

bool TransformerImpl::holds_layer(int64_t layer) const {
  return layer >= stage_layers_.start && layer < stage_layers_.start + stage_layers_.size;
}

void TransformerImpl::shard_pipeline_parallel(const PipelineParallel& pp) {
  if (!pp.active()) return;
  if (pp_.active()) throw ModelError("Transformer: shard_pipeline_parallel called twice");
  if (pp.stages > config_.num_layers)
    throw ModelError("Transformer: pipeline parallelism pp = " + std::to_string(pp.stages) +
                     " needs at least " + std::to_string(pp.stages) +
                     " layers, one per stage, but 'num_layers' = " + std::to_string(config_.num_layers) +
                     "; choose pp <= num_layers");
  if (pp.micro_batches < 1)
    throw ModelError("Transformer: 'pipeline_micro_batches' = " + std::to_string(pp.micro_batches) +
                     " must be at least 1");
  if (pp.vocab.group == nullptr || pp.vocab.size != pp.stages * tp_.size || pp.vocab.rank < 0 ||
      pp.vocab.rank >= pp.vocab.size)
    throw ModelError("Transformer: with " + std::to_string(pp.stages) + " pipeline stages of " +
                     std::to_string(tp_.size) +
                     " tp ranks the vocabulary is split over the replica's pp * tp ranks, but "
                     "PipelineParallel::vocab has " +
                     std::to_string(pp.vocab.size) + "; pass make_mesh_groups' vocab group");
  pp_ = pp;
  stage_layers_ = layers_of_stage(config_.num_layers, pp.stage, pp.stages);
  torch::NoGradGuard no_grad;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    if (holds_layer(i)) continue;
    for (auto& p : blocks_[i]->parameters()) {
      p.set_data(torch::empty({0}, p.options()));
      p.set_requires_grad(false);
    }
  }
  // The embedding's and the head's rows: this rank's share of the p * t.
  const Shard rows = shard_of(config_.vocab_size, pp.vocab.rank, pp.vocab.size);
  for (auto& item : named_parameters()) {
    if (!is_vocab_parameter(item.key())) continue;
    torch::Tensor& p = item.value();
    const torch::Tensor whole = gather_shards(p.detach(), 0, config_.vocab_size, tp_);
    p.set_data(whole.narrow(0, rows.start, rows.size).clone());
  }
  vocab_parallel_ = pp.vocab;
  vocab_ = rows;
  shard_config_.vocab_size = rows.size;
}

std::shared_ptr<TransformerImpl> TransformerImpl::unsharded_copy() {
  torch::NoGradGuard no_grad;
  // Constructing draws initial weights from torch's generator; they are
  // overwritten, so leave the generator as it was.
  at::Generator cpu = at::globalContext().defaultGenerator(torch::kCPU);
  const at::Tensor state = cpu.get_state();
  auto full = std::make_shared<TransformerImpl>(config_);
  cpu.set_state(state);
  const torch::Tensor& any = tok_embeddings->weight;
  full->to(any.device(), any.scalar_type());
  auto whole = full->named_parameters();
  for (auto& item : named_parameters()) {
    torch::Tensor& target = whole[item.key()];
    const int64_t layer = layer_of_parameter(item.key());
    const bool held = layer < 0 || holds_layer(layer);
    torch::Tensor value;
    if (held && is_vocab_parameter(item.key())) {
      value = gather_shards(item.value(), 0, target.size(0), vocab_parallel_);
    } else if (held) {
      const int64_t dim = tp_.active() ? tensor_parallel_dim(item.key()) : -1;
      value = dim < 0 ? item.value().detach() : gather_shards(item.value(), dim, target.size(dim), tp_);
    }
    if (pp_.active() && layer >= 0) {  // a block: its stage sends it to the others
      value = held ? value.contiguous() : torch::empty(target.sizes(), target.options());
      pp_.group->broadcast(value, stage_of_layer(layer, config_.num_layers, pp_.stages));
    }
    target.copy_(value);
  }
  return full;
}

torch::Tensor TransformerImpl::values(const torch::Tensor& hidden) {
  if (config_.head != Head::kValue) {
    throw ModelError("Transformer: values() needs a value head; load the model with head = Head::kValue");
  }
  return score(hidden).squeeze(-1);
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask) {
  torch::Tensor mask = attention_mask.defined() ? attention_mask : torch::ones_like(input_ids);
  return logits(hidden_states(input_ids, position_ids_from_mask(mask), mask));
}

}  // namespace rlwb::workers::model
