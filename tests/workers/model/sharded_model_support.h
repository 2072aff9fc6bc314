// What the tensor- and pipeline-parallel model tests share: the seeded
// model every rank and the one-process reference are built as, the rows
// they score, a loss that reaches every parameter of the language-model
// path, and the slice of a whole parameter that a tp rank holds.
#pragma once

#include <torch/torch.h>

#include <map>
#include <string>

#include "workers/model/sequence_scores.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer.h"

namespace rlwb::workers::model::testing {

inline Transformer seeded(const TransformerConfig& c) {
  torch::manual_seed(11);
  return Transformer(c);
}

// Left-padded prompts and right-padded responses, as the roles pass them.
inline SequenceBatch rows_for(int64_t vocab) {
  torch::manual_seed(5);
  torch::Tensor prompt = torch::randint(1, vocab, {3, 6});
  torch::Tensor prompt_mask = torch::ones({3, 6}, torch::kInt64);
  prompt_mask[0].narrow(0, 0, 2).fill_(0);
  torch::Tensor response = torch::randint(1, vocab, {3, 4});
  torch::Tensor response_mask = torch::ones({3, 4}, torch::kInt64);
  response_mask[2].narrow(0, 3, 1).fill_(0);
  return join_prompt_response(prompt, prompt_mask, response, response_mask);
}

// A loss that reaches every parameter of the language-model path.
inline torch::Tensor loss_of(Transformer& net, const SequenceBatch& rows) {
  ResponseLogProbs lp = response_log_probs(net, rows, /*temperature=*/0.8, /*with_entropy=*/true);
  torch::Tensor weights = torch::linspace(-1.0, 1.0, lp.log_probs.numel()).view(lp.log_probs.sizes());
  return (lp.log_probs * weights).sum() + 0.3 * lp.entropy.sum();
}

// Tensor-parallel rank `rank`'s slice of a whole parameter, as
// shard_tensor_parallel cuts it (the whole at tp = 1).
inline torch::Tensor slice_of(const torch::Tensor& whole, const std::string& name, int rank, int tp) {
  const int64_t dim = tp > 1 ? tensor_parallel_dim(name) : -1;
  if (dim < 0) return whole;
  const Shard part = shard_of(whole.size(dim), rank, tp);
  return whole.narrow(dim, part.start, part.size);
}

// What the one-process model with the seeded weights computes on `rows`:
// logits, log-probs and entropy (no autograd), and every parameter's
// gradient of loss_of.
struct OneProcessResults {
  torch::Tensor logits;
  ResponseLogProbs log_probs;
  std::map<std::string, torch::Tensor> gradients;
};

inline OneProcessResults what_one_process_computes(const TransformerConfig& c, const SequenceBatch& rows) {
  OneProcessResults want;
  Transformer reference = seeded(c);
  want.logits = reference->forward(rows.input_ids, rows.attention_mask).detach();
  {
    torch::NoGradGuard no_grad;
    want.log_probs = response_log_probs(reference, rows, 0.8, true);
  }
  loss_of(reference, rows).backward();
  for (auto& p : reference->named_parameters()) want.gradients[p.key()] = p.value().grad();
  return want;
}

}  // namespace rlwb::workers::model::testing
