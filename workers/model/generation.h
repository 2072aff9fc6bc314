// generate(): batched autoregressive sampling with a pre-allocated KV cache.
// Used by the actor role (rollouts) and ReMax's greedy baseline; prompts
// come left-padded (left_pad() builds them from token lists).
//
// One call: a prefill pass over the prompts, then one decoding step per new
// token. Rows that emit a stop token stop; once a quarter of the live rows
// have stopped they are dropped from the batch (their cache rows too), so
// later steps compute only on rows still generating. The call returns when
// every row has stopped or max_new_tokens is reached.
//
// Determinism: the same seed, prompts, model and options give the same
// tokens on CPU (one generator seeded per call; the batch order is fixed).
//
// A tensor-parallel model (transformer.h) generates collectively: every tp
// rank calls generate() with the same prompts and seed and gets the same
// tokens (vocab_parallel.h); greedy decoding gives the tokens of the
// unsharded model, sampling draws differently from it but from the same
// distribution.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

#include "workers/model/sampling.h"
#include "workers/model/transformer.h"

namespace rlwb::workers::model {

struct GenerationOptions {
  SamplingOptions sampling;
  int64_t max_new_tokens = 64;
  // A row ends after it emits one of these (the stop token is part of the
  // response). Empty: the config's eos_token_id, if any.
  std::vector<int64_t> stop_token_ids;
  // Fills responses after their end. -1: the config's pad_token_id, else its
  // eos_token_id, else 0.
  int64_t pad_token_id = -1;
  uint64_t seed = 0;
};

struct GenerationResult {
  torch::Tensor responses;      // [B, max_new_tokens] int64, pad after the end
  torch::Tensor response_mask;  // [B, max_new_tokens] int64, 1 for generated tokens (stop token included)
  torch::Tensor log_probs;      // [B, max_new_tokens] float32 (see sample_next_tokens); 0 where the mask is 0
  torch::Tensor response_lengths;  // [B] int64
};

// prompt_ids [B, P] int64, left-padded; prompt_mask [B, P] of 0/1 (every
// row needs at least one real token). Runs without autograd. Throws
// ModelError when P + max_new_tokens exceeds the context
// (max_position_embeddings) or an option is out of range.
GenerationResult generate(Transformer& model, const torch::Tensor& prompt_ids,
                          const torch::Tensor& prompt_mask, const GenerationOptions& options);

// Token lists -> left-padded ids [B, P] and mask [B, P] (P = longest).
struct PaddedPrompts {
  torch::Tensor ids;
  torch::Tensor mask;
};
PaddedPrompts left_pad(const std::vector<std::vector<int64_t>>& prompts, int64_t pad_token_id);

}  // namespace rlwb::workers::model
