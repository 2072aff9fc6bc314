// ModelShape: what the planner knows of one transformer -- its sizes, and
// from them its parameter count, its FLOPs per token and its KV cache per
// token. Built from a model's `config.model` (core/config/model_options.h)
// or written out for the paper's Llama models (bench/bench_planner.cpp).
// The counts follow the Transformer of workers/model (Llama/Qwen2 blocks:
// wq, wk, wv, wo, ffn_gate, ffn_up, ffn_down, two norms per layer).
#pragma once

#include <cstdint>
#include <string>

#include "core/config/model_options.h"

namespace rlwb::core::planner {

struct ModelShape {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t vocab_size = 0;
  bool tied_embeddings = false;
  // A value head (critic, reward and cost models: hidden -> 1) instead of
  // the LM head (hidden -> vocab).
  bool value_head = false;

  int64_t head_dim() const { return hidden_size / num_heads; }
  // Weights of one transformer block.
  double layer_parameters() const;
  // Every weight: embedding, blocks, final norm, head.
  double parameters() const;
  // FLOPs of one token's forward pass through the weights (2 per
  // multiply-add; the embedding lookup costs none).
  double weight_flops_per_token() const;
  // FLOPs of one token's attention over `context` earlier tokens (scores
  // and the weighted sum: 4 * layers * heads * head_dim * context).
  double attention_flops_per_token(double context) const;
  // Values one token adds to the KV cache over all layers (keys and values).
  double kv_values_per_token() const;
};

// The Llama models of the HybridFlow paper's experiments, from their
// Hugging Face config.json files: "7b", "13b", "70b" (Llama 2) and "34b"
// (Code Llama). Throws PlanError for another size.
ModelShape llama_shape(const std::string& size, bool value_head);

// The shape of a fresh model of `options`; `tokenizer_vocab` is used when
// the options leave vocab_size to the tokenizer.
ModelShape model_shape_of(const config::ModelShapeOptions& options, int64_t tokenizer_vocab, bool value_head);

}  // namespace rlwb::core::planner
