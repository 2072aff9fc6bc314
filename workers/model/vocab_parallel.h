// The language-model head's softmax when the vocabulary is split over the
// tensor-parallel ranks (tensor_parallel.h): each rank holds logits for its
// vocab_shard() only, and these reduce over the ranks with a few numbers
// per row -- never the whole vocabulary:
//   log-sum-exp   max (all-reduce max), then S = sum of exp (all-reduce sum)
//   chosen logit  the rank holding the token gives it, the others 0 (sum)
//   entropy       H = lse - T / S with T = sum_v exp(logit_v - max) logit_v,
//                 reduced in the same all-reduce as S. (Not from p_v =
//                 exp(logit_v - lse) on each rank: lse's gradient would then
//                 miss the other ranks' terms, as backward of a sum over
//                 ranks is the identity only for what every rank computes
//                 alike.) S, the chosen logit and T travel in one all-reduce.
//   sampling      one all-gather per step of each rank's candidate and
//                 its (max, sum of exp), from which every rank gets the
//                 token and its log-prob. greedy: every rank's best;
//                 temperature: Gumbel-max, each rank adding noise to its
//                 own logits; top-k: every rank's k best, gathered, then
//                 top-k/top-p over those candidates (exact: top-p acts on
//                 what top-k kept); top-p alone gathers the logits.
// With one rank each is the plain computation over the whole row.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include "workers/model/sampling.h"
#include "workers/model/tensor_parallel.h"

namespace rlwb::workers::model {

// The embedding lookup of ids [...] (global) in this rank's rows `weight`
// [vocab.size, E]: each id's row where the rank holds it, zeros for the
// others -- summed over the ranks the vocabulary is split over, every id's
// row. (The sum is the caller's: over tp, or over the stages too.)
torch::Tensor held_embedding_rows(const torch::Tensor& weight, const torch::Tensor& input_ids, Shard vocab);

// Log-probs of tokens `targets` [...] (global ids) under softmax(logits)
// from local [..., Vr], and the entropy when asked (else undefined). Two
// collectives: the max, then S, the chosen logit and T in one sum.
struct VocabLogProbs {
  torch::Tensor log_probs, entropy;
};
VocabLogProbs vocab_log_probs(const torch::Tensor& local, const torch::Tensor& targets, Shard vocab,
                              const TensorParallel& tp, bool with_entropy);

// sample_next_tokens (sampling.h) over local logits [B, Vr] of a
// vocabulary of vocab_size tokens. Every tp rank
// returns the same tokens: `shared` must be seeded alike on the tp ranks,
// `own` differently on each (the Gumbel noise of its own logits). With one
// rank this is sample_next_tokens(local, options, shared).
NextTokens sample_vocab_parallel(const torch::Tensor& local, Shard vocab, int64_t vocab_size,
                                 const TensorParallel& tp, const SamplingOptions& options,
                                 at::Generator& shared, at::Generator& own);

}  // namespace rlwb::workers::model
