// Training-side passes over (prompt, response) rows with teacher forcing:
// per-token log-probs and entropy of the response (actor, reference),
// per-token values (critic) and one score per sequence (reward and cost
// models). Used by the roles in workers/roles; the algorithms in
// core/algorithms consume what these return.
//
// Row layout (verl's): input_ids = [prompt, left-padded | response,
// right-padded], attention_mask 1 on real tokens; the last
// `response_length` columns are the response. Position ids follow the mask.
// Everything here is differentiable: wrap calls in torch::NoGradGuard (or
// c10::InferenceMode) when not training. Outputs at padding positions are
// finite but meaningless: mask them with the response mask.
#pragma once

#include <torch/types.h>

#include "workers/model/transformer.h"

namespace rlwb::workers::model {

// [prompt | response] rows from generate()'s inputs and outputs.
struct SequenceBatch {
  torch::Tensor input_ids;       // [B, P + R] int64
  torch::Tensor attention_mask;  // [B, P + R] int64
  int64_t response_length = 0;   // R
};
SequenceBatch join_prompt_response(const torch::Tensor& prompt_ids, const torch::Tensor& prompt_mask,
                                   const torch::Tensor& responses, const torch::Tensor& response_mask);

struct ResponseLogProbs {
  torch::Tensor log_probs;  // [B, R] float32: log p(response token | everything before)
  torch::Tensor entropy;    // [B, R] float32, entropy of that next-token distribution; undefined unless asked
};

// Log-probs (and entropy) of the response tokens under
// softmax(logits / temperature). Only the R positions that predict the
// response go through the language-model head.
ResponseLogProbs response_log_probs(Transformer& model, const SequenceBatch& batch, double temperature = 1.0,
                                    bool with_entropy = false);

// Critic values [B, R] float32: values[:, i] is the value of the state in
// which response token i is chosen (the hidden state one position before
// it), as in verl. Needs a value head.
torch::Tensor response_values(Transformer& model, const SequenceBatch& batch);

// Reward/cost-model scores [B] float32: the value head at each row's last
// real token. Needs a value head.
torch::Tensor sequence_scores(Transformer& model, const torch::Tensor& input_ids,
                              const torch::Tensor& attention_mask);

}  // namespace rlwb::workers::model
