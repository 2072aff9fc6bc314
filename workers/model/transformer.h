// Transformer: a decoder-only transformer of the Llama/Qwen2 family in
// LibTorch -- token embedding, N pre-norm blocks (RMSNorm, rotary
// grouped-query attention, SwiGLU MLP), final RMSNorm, and a head: the
// language-model head (actor, reference) or a value head (critic, reward
// and cost models). See transformer_config.h for the settings,
// hf_checkpoint.h for loading/saving, generation.h for sampling and
// sequence_scores.h for the training-side log-probs, entropy and values.
//
// One block, in the names the code uses:
//   h   = x + wo(Attention(RoPE(wq(attn_norm(x))), RoPE(wk(attn_norm(x))), wv(attn_norm(x))))
//   out = h + ffn_down(silu(ffn_gate(ffn_norm(h))) * ffn_up(ffn_norm(h)))
//
// Every linear layer's product goes through linear.h (oneDNN on CPU
// float32). Without autograd (generation, reference log-probs) a block runs
// wq, wk, wv as one matmul and ffn_gate, ffn_up as another, over
// PackedLinear copies of the weights that are rebuilt whenever a source
// parameter changes (its version counter or storage moved). The copies
// cost the memory of the weights once more; a Transformer is not safe to
// call from two threads at once.
//
// Parameters are float32 on CPU after construction, initialised like HF
// (normal(0, initializer_range) weights, zero biases, unit norms) from
// torch's global generator: torch::manual_seed() before construction makes
// the model reproducible. Move/cast with ->to(device, dtype).
//
// Tensor parallelism (tensor_parallel.h): shard_tensor_parallel() keeps
// only this rank's part of every split parameter, after which a forward
// pass is collective over the tp ranks: each computes its heads, its part
// of the MLP width and its part of the vocabulary, with one all-reduce after
// the attention, one after the MLP and one after the embedding. logits()
// then returns this rank's vocabulary columns only (vocab_shard());
// sequence_scores.h and generation.h reduce over them without gathering.
//
// Pipeline parallelism (pipeline_parallel.h): shard_pipeline_parallel()
// keeps only this stage's blocks (the others' parameters become empty) and
// splits the vocabulary over all p * t ranks of the replica; a forward
// pass hands each stage's output to the next; every stage ends with the
// same final hidden states, and the head's columns, log-probs and losses
// reduce over the p * t ranks as over tp ranks without stages.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <vector>

#include "workers/model/kv_cache.h"
#include "workers/model/linear.h"
#include "workers/model/pipeline_parallel.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer_config.h"

namespace rlwb::workers::model {

class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(int64_t dim, double eps);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight;
  double eps;
};
TORCH_MODULE(RMSNorm);

// What every block of one forward pass shares: rotary angles of the
// positions being computed and the attention mask.
struct BlockInputs {
  torch::Tensor cos;   // [B, 1, T, D]
  torch::Tensor sin;   // [B, 1, T, D]
  torch::Tensor mask;  // [B, 1, T, S] bool, or undefined (then `causal` says which)
  bool causal = true;
  KVCache* cache = nullptr;
};

class TransformerBlockImpl : public torch::nn::Module {
 public:
  TransformerBlockImpl(const TransformerConfig& config, int64_t layer_index);
  // Outputs for positions [outputs_from, T) of x [B, T, hidden]. Earlier
  // positions still serve as keys and values, but their queries, output
  // projection and MLP are skipped (only the last block is asked for fewer
  // outputs: every position feeds the next block's keys).
  torch::Tensor forward(const torch::Tensor& x, const BlockInputs& in, int64_t outputs_from = 0);
  // This block computes its share of the heads from now on (the
  // Transformer has narrowed the weights).
  void use_tensor_parallel(const TensorParallel& tp);

  RMSNorm attn_norm{nullptr};
  torch::nn::Linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};
  RMSNorm ffn_norm{nullptr};
  torch::nn::Linear ffn_gate{nullptr}, ffn_up{nullptr}, ffn_down{nullptr};

 private:
  torch::Tensor attention(const torch::Tensor& x, const BlockInputs& in, int64_t outputs_from);
  torch::Tensor feed_forward(const torch::Tensor& x);
  // A row-parallel product's partial sums, summed over the tp ranks, plus the bias.
  torch::Tensor row_parallel_sum(const torch::Tensor& partial, const torch::Tensor& bias);

  TensorParallel tp_;
  // No-grad copies: [wq; wk; wv], wo, [ffn_gate; ffn_up], ffn_down.
  PackedLinear packed_qkv_, packed_wo_, packed_gate_up_, packed_down_;
  int64_t layer_index_;
  int64_t num_heads_, num_kv_heads_, head_dim_;
};
TORCH_MODULE(TransformerBlock);

class TransformerImpl : public torch::nn::Module {
 public:
  explicit TransformerImpl(const TransformerConfig& config);

  const TransformerConfig& config() const { return config_; }

  // Keeps this rank's share of every split parameter (tensor_parallel_dim)
  // and computes collectively from now on. Call once, before an optimizer
  // takes the parameters, on every tp rank with the same weights. Throws
  // ModelError naming the setting when tp does not divide the heads, the
  // key/value heads or the MLP width (a vocabulary need not divide).
  void shard_tensor_parallel(const TensorParallel& tp);
  const TensorParallel& tensor_parallel() const { return tp_; }
  // Keeps this stage's blocks only (layers_of_stage); the other blocks'
  // parameters become empty and frozen, so optimizers and gradient sums
  // skip them; the embedding and head keep the rows of pp.vocab's share.
  // Call once, after shard_tensor_parallel(), on every stage with the same
  // weights, before an optimizer takes the parameters (collective over the
  // tp ranks). Throws ModelError naming the setting when there are more
  // stages than layers, and when pp.vocab is not the replica's p * t ranks.
  void shard_pipeline_parallel(const PipelineParallel& pp);
  const PipelineParallel& pipeline_parallel() const { return pp_; }
  // The ranks the vocabulary is split over: the tp ranks, or with stages
  // the replica's p * t ranks (pp.vocab). What vocab_log_probs and
  // sample_vocab_parallel (vocab_parallel.h) reduce over.
  const TensorParallel& vocab_parallel() const { return vocab_parallel_; }
  // Whether this stage runs block `layer`.
  bool holds_layer(int64_t layer) const;
  // This rank's token ids: all of them without tensor or pipeline parallelism.
  Shard vocab_shard() const { return vocab_; }
  // The config of this rank's share (its heads, width and vocabulary):
  // what a KV cache of this rank is sized by. config() without tp.
  const TransformerConfig& shard_config() const { return shard_config_; }
  // An unsharded model with the same weights, gathered from the tp ranks
  // and the pipeline stages (collective; each rank gets the whole model).
  // For saving a checkpoint.
  std::shared_ptr<TransformerImpl> unsharded_copy();

  // Final-norm hidden states [B, T, hidden] of input_ids [B, T] at
  // position_ids [B, T]. key_mask [B, S] marks real (1) and padding (0)
  // keys, S = T without a cache, cache->length() + T with one (then this
  // call appends T positions to the cache). An undefined key_mask means no
  // padding. outputs_from > 0 returns only positions [outputs_from, T):
  // the others are computed only as far as the keys and values need them,
  // which saves most of the last block for positions nobody reads (a
  // prompt's positions when only the response is scored).
  torch::Tensor hidden_states(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                              const torch::Tensor& key_mask, KVCache* cache = nullptr,
                              int64_t outputs_from = 0);

  // Head outputs from hidden states [..., hidden]:
  //   logits  [..., vocab]  (language-model head; tied or lm_head; with
  //                          tensor parallelism this rank's vocab_shard())
  //   values  [...]         (value head, the score of that position)
  // Each throws ModelError when the model has the other head.
  torch::Tensor logits(const torch::Tensor& hidden);
  torch::Tensor values(const torch::Tensor& hidden);

  // Logits for every position of a (possibly left-padded) batch:
  // attention_mask [B, T] of 0/1, position ids derived from it.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);

  // The parameters in RLWB's names ("layers.0.wq.weight", ...); see
  // hf_checkpoint.h for the mapping to HF's names.
  torch::nn::Embedding tok_embeddings{nullptr};
  torch::nn::ModuleList layers{nullptr};
  RMSNorm norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // null when tied or when head == kValue
  torch::nn::Linear score{nullptr};    // value head; null unless head == kValue

 private:
  torch::Tensor embed(const torch::Tensor& input_ids);
  static BlockInputs rows_of(const BlockInputs& in, const Shard& rows);
  torch::Tensor through_stages(torch::Tensor x, const BlockInputs& in, int64_t outputs_from, int micro_batch);

  TransformerConfig config_, shard_config_;
  TensorParallel tp_;
  PipelineParallel pp_;
  TensorParallel vocab_parallel_;  // tp_, or pp_.vocab with stages
  Shard stage_layers_;             // the blocks this stage runs: all without pipeline parallelism
  Shard vocab_;
  PackedLinear packed_head_;              // no-grad copy of lm_head (or the tied embedding)
  std::vector<TransformerBlock> blocks_;  // the same modules as `layers`, typed
  torch::Tensor rope_cos_;                // [max_position_embeddings, D]
  torch::Tensor rope_sin_;
};
TORCH_MODULE(Transformer);

}  // namespace rlwb::workers::model
