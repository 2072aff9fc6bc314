#include "workers/model/sequence_scores.h"

#include <torch/torch.h>

#include "workers/model/kv_cache.h"
#include "workers/model/layers.h"
#include "workers/model/model_error.h"
#include "workers/model/shared_prompts.h"
#include "workers/model/vocab_parallel.h"

namespace rlwb::workers::model {
namespace {

void check(const SequenceBatch& b, const char* what) {
  if (b.input_ids.dim() != 2 || b.attention_mask.sizes() != b.input_ids.sizes()) {
    throw ModelError(std::string(what) + ": input_ids and attention_mask must both be [batch, length]");
  }
  if (b.response_length <= 0 || b.response_length >= b.input_ids.size(1)) {
    throw ModelError(std::string(what) + ": response_length " + std::to_string(b.response_length) +
                     " must be in [1, length - 1] (length " + std::to_string(b.input_ids.size(1)) +
                     "; a prompt needs one token)");
  }
}

// Hidden states at the R positions that predict the response tokens.
// Rows that share a prompt (shared_prompts.h) run it once, into a growing
// KV cache that autograd flows through; the cache is copied to the rows,
// and the responses run against it (the copies sum their gradients back
// into the one prompt pass).
torch::Tensor response_hidden(Transformer& model, const SequenceBatch& b) {
  const torch::Tensor& ids = b.input_ids;
  const torch::Tensor mask = b.attention_mask.to(ids.device());
  const int64_t rows = ids.size(0), prompt_len = ids.size(1) - b.response_length, r = b.response_length;
  const auto shared = prompts_worth_sharing(ids.narrow(1, 0, prompt_len), mask.narrow(1, 0, prompt_len));
  if (!shared) {
    // Only the last R + 1 positions are asked for; the prompt's are keys.
    torch::Tensor hidden =
        model->hidden_states(ids, position_ids_from_mask(mask), mask, nullptr, prompt_len - 1);
    return hidden.narrow(1, 0, r);
  }
  const DistinctPrompts& prompts = *shared;
  KVCache cache(model->shard_config(), prompts.count());
  // The prompt's last position predicts the first response token.
  torch::Tensor first = model
                            ->hidden_states(prompts.ids, position_ids_from_mask(prompts.mask), prompts.mask,
                                            &cache, prompt_len - 1)
                            .index_select(0, prompts.prompt_of);
  if (r == 1) return first;
  cache.keep_rows(prompts.prompt_of);
  // Response positions 0..R-2 predict tokens 1..R-1; the last one predicts
  // nothing, so it is not run.
  torch::Tensor rest = model->hidden_states(ids.narrow(1, prompt_len, r - 1),
                                            position_ids_from_mask(mask).narrow(1, prompt_len, r - 1),
                                            mask.narrow(1, 0, prompt_len + r - 1), &cache);
  return torch::cat({first, rest}, 1);
}

}  // namespace

SequenceBatch join_prompt_response(const torch::Tensor& prompt_ids, const torch::Tensor& prompt_mask,
                                   const torch::Tensor& responses, const torch::Tensor& response_mask) {
  return {torch::cat({prompt_ids, responses}, 1),
          torch::cat({prompt_mask.to(torch::kInt64), response_mask.to(torch::kInt64)}, 1), responses.size(1)};
}

ResponseLogProbs response_log_probs(Transformer& model, const SequenceBatch& batch, double temperature,
                                    bool with_entropy) {
  check(batch, "response_log_probs");
  if (!(temperature > 0)) throw ModelError("response_log_probs: 'temperature' must be > 0");
  torch::Tensor logits = model->logits(response_hidden(model, batch)).to(torch::kFloat32);
  if (temperature != 1.0) logits = logits / temperature;
  torch::Tensor targets =
      batch.input_ids.narrow(1, batch.input_ids.size(1) - batch.response_length, batch.response_length);
  // With tensor parallelism, this rank's vocabulary columns only: reduced,
  // never gathered (vocab_parallel.h).
  VocabLogProbs lp =
      vocab_log_probs(logits, targets, model->vocab_shard(), model->vocab_parallel(), with_entropy);
  return {lp.log_probs, lp.entropy};
}

torch::Tensor response_values(Transformer& model, const SequenceBatch& batch) {
  check(batch, "response_values");
  return model->values(response_hidden(model, batch)).to(torch::kFloat32);
}

torch::Tensor sequence_scores(Transformer& model, const torch::Tensor& input_ids,
                              const torch::Tensor& attention_mask) {
  const torch::Tensor mask = attention_mask.to(input_ids.device()).to(torch::kInt64);
  torch::Tensor hidden = model->hidden_states(input_ids, position_ids_from_mask(mask), mask);
  // Index of the last real token: the largest position whose mask is 1.
  torch::Tensor positions = torch::arange(input_ids.size(1), mask.options()).unsqueeze(0);
  torch::Tensor last = (positions * mask).argmax(1);  // [B]
  torch::Tensor last_hidden = hidden.index({torch::arange(input_ids.size(0), mask.options()), last});
  return model->values(last_hidden).to(torch::kFloat32);
}

}  // namespace rlwb::workers::model
