// GenerationLayoutModel: the Transformer (workers/model/transformer.h)
// computed at the generation layout's tensor parallelism t_g, straight
// from the parameters the 3D-HybridEngine gathered (hybrid_engine.h) --
// no parameter is copied, packed or re-laid out for it. Same equations
// and names as the Transformer's block:
//   h   = x + wo(Attention(RoPE(wq(attn_norm(x))), RoPE(wk(attn_norm(x))), wv(attn_norm(x))))
//   out = h + ffn_down(silu(ffn_gate(ffn_norm(h))) * ffn_up(ffn_norm(h)))
//
// How the gathered parameters are laid out, and why it computes as it does.
// A micro-DP group of d_g ranks gathers d_g consecutive training shards
// side by side (generation_buffer.h), shard j at [j * shard, (j+1) * shard):
//   - a dimension-0 split (wq, wk, wv, ffn_gate, ffn_up, their biases, the
//     embedding and LM-head rows) concatenates contiguously: the buffer IS
//     the generation shard [d_g * rows, in] and is used as it is;
//   - a dimension-1 split (the row-parallel wo and ffn_down, [out, in/t])
//     does not: the buffer is [d_g, out, in/t], d_g column blocks, and the
//     generation shard [out, d_g * in/t] would need a transposing copy --
//     a second copy of every row-parallel weight, the very redundancy the
//     engine removes. So the row-parallel product is taken block by block,
//     y = sum_j x_j W_j^T (one batched matmul over the d_g blocks, then a
//     sum), before the usual all-reduce over the t_g generation ranks:
//     Megatron's row-parallel sum, its first d_g terms summed locally.
//     (Storing these weights transposed for training would make the split
//     contiguous too, but then every training step would run over strided
//     weights; the block sum costs one [d_g, tokens, out] intermediate.)
// The Transformer's no-grad path packs [wq; wk; wv] and [ffn_gate; ffn_up]
// into copies (linear.h's PackedLinear); this model does not, so its
// parameter memory stays the gathered buffers, M/t_g.
//
// Collective over the generation TP group (t_g ranks) like a
// tensor-parallel Transformer: the vocabulary is split over them, and
// logits() returns this rank's vocab_shard() columns. With p_g generation
// stages it is collective over the generation PP group too, as a
// pipeline-parallel Transformer (model/pipeline_parallel.h): a stage holds
// layers_of_stage(num_layers, stage, p_g) only, hands its output to the
// next stage, and the last stage's goes to every stage; the vocabulary is
// then split over the generation replica's p_g t_g ranks (pp.vocab), so
// every stage computes its columns of the logits and samples the same
// tokens.
#pragma once

#include <torch/types.h>

#include <map>
#include <string>
#include <vector>

#include "workers/model/generation.h"
#include "workers/model/kv_cache.h"
#include "workers/model/pipeline_parallel.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer_config.h"

namespace rlwb::workers::hybrid_engine {

// One layer's parameters in the generation layout (shapes for a rank of
// t_g generation ranks, d_g blocks; H heads, K key/value heads, D head
// dimension, I the MLP width, E the hidden size).
struct GenerationLayerWeights {
  torch::Tensor attn_norm, ffn_norm;        // [E], replicated
  torch::Tensor wq, wk, wv;                 // [H/t_g * D, E], [K/t_g * D, E] x2
  torch::Tensor wq_bias, wk_bias, wv_bias;  // undefined without qkv_bias
  torch::Tensor wo_blocks;                  // [d_g, E, H/t * D]
  torch::Tensor wo_bias;                    // [E] replicated, or undefined
  torch::Tensor ffn_gate, ffn_up;           // [I/t_g, E]
  torch::Tensor ffn_gate_bias, ffn_up_bias;
  torch::Tensor ffn_down_blocks;  // [d_g, E, I/t]
  torch::Tensor ffn_down_bias;    // [E] replicated, or undefined
};

struct GenerationWeights {
  torch::Tensor tok_embeddings;  // [V/(p_g t_g), E]
  // This generation stage's layers, the first being block `first_layer`
  // of the model (every layer, from 0, without pipeline stages).
  int64_t first_layer = 0;
  std::vector<GenerationLayerWeights> layers;
  torch::Tensor norm;     // [E]
  torch::Tensor lm_head;  // [V/(p_g t_g), E]; the embedding's tensor when tied
};

class GenerationLayoutModel {
 public:
  // `config` is the whole model's; `tp` this rank among the generation TP
  // ranks, `pp` among the generation stages (and pp.vocab among the
  // replica's p_g t_g ranks). Throws ModelError when t_g does not divide
  // the heads, the key/value heads or the MLP width, when p_g t_g does not
  // divide the vocabulary, or when the weights are not the layers of this
  // stage.
  GenerationLayoutModel(const model::TransformerConfig& config, GenerationWeights weights,
                        const model::TensorParallel& tp, const model::PipelineParallel& pp = {});

  // This rank's token ids [start, start + V/(p_g t_g)).
  model::Shard vocab_shard() const { return vocab_; }
  // Its heads, width and vocabulary: what its KV cache is sized by.
  const model::TransformerConfig& shard_config() const { return shard_config_; }
  const model::TensorParallel& tensor_parallel() const { return tp_; }
  const model::PipelineParallel& pipeline_parallel() const { return pp_; }
  // The ranks its vocabulary is split over: the generation TP group, or
  // with stages the generation replica's p_g t_g ranks.
  const model::TensorParallel& vocab_parallel() const { return vocab_parallel_; }

  // As Transformer::hidden_states without outputs_from: final-norm hidden
  // states [B, T, E]; key_mask [B, cache length + T] or undefined.
  torch::Tensor hidden_states(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                              const torch::Tensor& key_mask, model::KVCache* cache = nullptr);
  // This rank's vocabulary columns of the logits of hidden [..., E].
  torch::Tensor logits(const torch::Tensor& hidden);
  // Logits (this rank's columns) of a left-padded batch, on the weights'
  // device (the ids and mask may be on the host).
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& attention_mask);

  // As model::generate(): the same options, checks and result, and greedy
  // decoding gives its tokens; every generation TP rank calls it with the
  // same prompts and seed; the result is on the weights' device, as
  // generate()'s on its model's. (It keeps finished rows in the batch; generate()
  // drops them, so sampled tokens differ from generate()'s once a row stops.)
  model::GenerationResult generate(const torch::Tensor& prompt_ids, const torch::Tensor& prompt_mask,
                                   const model::GenerationOptions& options);

 private:
  struct Step;  // what every layer of one pass shares
  torch::Tensor embed(const torch::Tensor& input_ids);
  // This stage's layer `local` (block first_layer + local of the model).
  torch::Tensor layer(int64_t local, const torch::Tensor& x, const Step& step);
  torch::Tensor row_parallel(const torch::Tensor& x, const torch::Tensor& blocks, const torch::Tensor& bias);

  model::TransformerConfig config_, shard_config_;
  GenerationWeights weights_;
  model::TensorParallel tp_;
  model::PipelineParallel pp_;
  model::TensorParallel vocab_parallel_;  // tp_, or pp_.vocab with stages
  model::Shard vocab_;
  torch::Tensor rope_cos_, rope_sin_;
};

}  // namespace rlwb::workers::hybrid_engine
